// attnscope-cli as tests/gpu's suites run it to see a device fail: the product's process
// (runCliProcess) with a Vulkan fault injected into every backend it makes, which the product's
// binary cannot be asked for:
//   ATTNSCOPE_TEST_VULKAN_FAULT=create|device-lost|oom|timeout|partial-instance|partial-device
// or with another library opened as the Vulkan loader (a missing file, a library that is none):
//   ATTNSCOPE_TEST_VULKAN_LOADER=PATH

#include "../common/VulkanFaults.h"

#include "app/cli/CliCommands.h"
#include "gpu/VulkanApi.h"

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
    if (const QString loader = qEnvironmentVariable("ATTNSCOPE_TEST_VULKAN_LOADER"); !loader.isEmpty())
        vk::setLoaderPath(loader.toStdString());
    CliHooks hooks;
    hooks.backend.vulkan.fault = *fault;
    return runCliProcess(argc, argv, hooks);
}
