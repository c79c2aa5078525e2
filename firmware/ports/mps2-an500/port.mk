# mps2-an500: Arm MPS2 with the AN500 FPGA image, Cortex-M7 at 25 MHz
# (qemu-system-arm -M mps2-an500). See docs/firmware-ports.md.
MPS2_MACHINE    := mps2-an500
MPS2_CPU_FLAGS  := -mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16
MPS2_DEFS       := -DEB_MPS2_AN500 -DEB_MPS2_CORTEX_M7
include $(abspath $(dir $(lastword $(MAKEFILE_LIST))))/../mps2-common/mps2.mk
