#pragma once

#include "core/Result.h"

#include <string>
#include <vector>

namespace attnscope::vk {

// The Vulkan loader reads a JSON manifest for every driver (icd.d) and implicit layer
// (implicit_layer.d) before it creates an instance. When one of them is not valid JSON, the
// loader answers every call with VK_ERROR_OUT_OF_HOST_MEMORY (its JSON parser's failure and an
// allocation failure look the same to it), which would send a user looking for memory that is
// not missing. These find the file instead, the way the loader finds them: VK_DRIVER_FILES (or
// the older VK_ICD_FILENAMES) and VK_ADD_DRIVER_FILES when set, otherwise the XDG configuration
// and data folders and /etc; implicit layers in the same folders and VK_ADD_LAYER_PATH.

// Every manifest file the loader would read (files named *.json; a listed folder's *.json).
std::vector<std::string> loaderManifests();

// The first manifest that is not valid JSON, as an Error of kind Unsupported naming the file
// and where its JSON breaks ("vulkan.manifest"); Ok when every manifest parses.
Status checkLoaderManifests();

} // namespace attnscope::vk
