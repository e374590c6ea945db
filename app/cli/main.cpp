#include "app/cli/CliCommands.h"

int main(int argc, char *argv[])
{
    return attnscope::runCliProcess(argc, argv);
}
