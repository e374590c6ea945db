// attnscope-cli as tests/gpu's suites run it to see a device fail: the product's process
// (runCliProcess) with a Vulkan fault injected into every backend it makes, which the product's
// binary cannot be asked for:
//   ATTNSCOPE_TEST_VULKAN_FAULT=create|device-lost|oom|timeout|partial-instance|partial-device

#include "../common/VulkanFaults.h"

#include "app/cli/CliCommands.h"

#include <QtGlobal>

#include <cstdio>

int main(int argc, char *argv[])
{
    using namespace attnscope;
    auto fault = test::parseVulkanFault(qEnvironmentVariable("ATTNSCOPE_TEST_VULKAN_FAULT").toStdString());
    if (!fault) {
        std::fprintf(stderr, "ATTNSCOPE_TEST_VULKAN_FAULT: %s\n", fault.message().c_str());
        return 2;
    }
    CliHooks hooks;
    hooks.backend.vulkan.fault = *fault;
    return runCliProcess(argc, argv, hooks);
}
