#pragma once

#include <functional>
#include <optional>

namespace attnscope {

class MainWindow;

// What a program built on the application's start-up does once the window is shown. The product
// passes none; a test driver (tests/gui/attnscope_scripted.cpp) answers the recovery offer, edits
// the document and writes its state, so that no test hook is in the product's binary.
struct StartupHooks {
    std::optional<bool> recoveryAnswer; // answers the recovery offer without asking (true: recover)
    std::function<void(MainWindow &)> afterStart;
};

// The desktop application: process set-up, translations, the command line (a project or an
// attention file, --example-model), the first document, the recovery offer, the event loop.
int runApplication(int argc, char *argv[], const StartupHooks &hooks = {});

} // namespace attnscope
