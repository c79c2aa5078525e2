# mps2-an386: Arm MPS2 with the AN386 FPGA image, Cortex-M4F at 25 MHz
# (qemu-system-arm -M mps2-an386). See docs/firmware-ports.md.
MPS2_MACHINE    := mps2-an386
MPS2_CPU_FLAGS  := -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
MPS2_DEFS       := -DEB_MPS2_AN386
include $(abspath $(dir $(lastword $(MAKEFILE_LIST))))/../mps2-common/mps2.mk
