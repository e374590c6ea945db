#pragma once

#include "core/Result.h"
#include "core/formats/ProjectFile.h"

#include <QList>
#include <QString>

namespace attnscope {

// The built-in examples (":/examples/..."): the loose ones at the top, and one folder per
// tutorial ("tutorial1-multihead-cross/...", see resources/examples/make_tutorial_examples.py).
struct ExampleEntry {
    QString path;  // ":/examples/NAME.attnscope.json" or ":/examples/FOLDER/NAME.attnscope.json"
    QString title; // the project's "title" ("中文标题 — English title" for a tutorial's), else the file name
    QString group; // empty for a loose example; else the project's "tutorial" (its submenu), else the folder
};

// What File > Examples names an example or a tutorial's submenu by: short enough for any screen
// (the titles run to 140 characters, in two languages), the half of "中文 — English" in the
// interface's language up to its first colon or parenthesis (shortFigureName), else that half cut
// to kExampleMenuText characters with "…". The whole title is the entry's tooltip.
inline constexpr int kExampleMenuText = 48;
QString exampleMenuText(const QString &title);

// Every example, loose ones first, then by folder and file name. Reads only the titles (no
// matrices, no .npy files), so filling the menu stays cheap.
QList<ExampleEntry> builtInExamples();

// Reads an example. One in a folder may hold `{"npy": ...}` references, which resolve against a
// real folder only: the example's folder is copied out of the resources first, to
// copyRoot/FOLDER (default: the application's local data folder, "examples"), and read there,
// so its references (and a later Save As, which rewrites them relative to the new place) find
// the .npy files.
Result<Project> readExample(const QString &resourcePath, const QString &copyRoot = {});

// Where readExample copies examples to by default.
QString exampleCopyRoot();

} // namespace attnscope
