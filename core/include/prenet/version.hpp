#pragma once

namespace prenet {
/// The product version, stamped by CMake from project(VERSION); the same string everywhere.
const char* version();
}  // namespace prenet
