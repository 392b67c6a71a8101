// A stand-in for libnvidia-ml with the few functions nvml_actuator and read_nvml use, built as a shared
// library that the test opens by path. Device 0 accepts everything; device 1 refuses changes
// as NVML does without root (NVML_ERROR_NO_PERMISSION = 4); devices 2 and up do not exist.
#include <cstdint>

namespace {
unsigned g_limit_mw = 250000;
unsigned g_locked_mhz = 0;
int g_open = 0;
}  // namespace

extern "C" {

int nvmlInit_v2() {
  ++g_open;
  return 0;
}
int nvmlShutdown() {
  --g_open;
  return 0;
}
const char* nvmlErrorString(int code) { return code == 4 ? "Insufficient Permissions" : "Invalid Argument"; }
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index > 1) return 2;
  *device = reinterpret_cast<void*>(static_cast<std::uintptr_t>(index + 1));
  return 0;
}
int nvmlDeviceGetPowerManagementLimitConstraints(void*, unsigned* low, unsigned* high) {
  *low = 100000;
  *high = 300000;
  return 0;
}
int nvmlDeviceGetPowerManagementLimit(void*, unsigned* limit) {
  *limit = g_limit_mw;
  return 0;
}
int nvmlDeviceSetPowerManagementLimit(void* device, unsigned limit) {
  if (device == reinterpret_cast<void*>(2)) return 4;
  g_limit_mw = limit;
  return 0;
}
int nvmlDeviceSetGpuLockedClocks(void* device, unsigned low, unsigned high) {
  if (device == reinterpret_cast<void*>(2)) return 4;
  g_locked_mhz = low == high ? low : 0;
  return 0;
}
int nvmlDeviceResetGpuLockedClocks(void*) {
  g_locked_mhz = 0;
  return 0;
}

// Readings: 87.5 W drawn; the graphics clock is the locked one, else 1.41 GHz, at most 1.98 GHz;
// the memory clock 2.619 GHz.
int nvmlDeviceGetPowerUsage(void*, unsigned* milliwatts) {
  *milliwatts = 87500;
  return 0;
}
int nvmlDeviceGetClockInfo(void*, int type, unsigned* mhz) {
  if (type != 0 && type != 2) return 2;
  *mhz = type == 2 ? 2619 : (g_locked_mhz != 0 ? g_locked_mhz : 1410);
  return 0;
}
int nvmlDeviceGetMaxClockInfo(void*, int type, unsigned* mhz) {
  if (type != 0) return 2;
  *mhz = 1980;
  return 0;
}

// For the test: the state the actuator left.
unsigned fake_nvml_limit_mw() { return g_limit_mw; }
unsigned fake_nvml_locked_mhz() { return g_locked_mhz; }
int fake_nvml_open() { return g_open; }
}
