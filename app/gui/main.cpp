// attnscope [FILE]: opens the project or attention file, or the built-in self-attention tutorial;
// attnscope --example-model: the built-in example model.

#include "app/gui/views/Application.h"

int main(int argc, char *argv[])
{
    return attnscope::runApplication(argc, argv);
}
