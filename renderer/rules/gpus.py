"""Which GPU architecture a device is, when the profile does not say: from its PCI id, the chip
named in its resource name, or the board named in its vGPU type.

The architecture rules (vGPU Device Manager on Pascal..Ampere only, SR-IOV vGPU on Ada and
Blackwell needing KubeVirt >= 1.9) must fire for what the profile implies, not only for what it
spells out. Pure data and lookups.

Sources: PCI_DEVICES is NVIDIA's (vendor 10DE) data-center and professional boards, Pascal to
Blackwell, from the PCI ID Repository's pci.ids, version 2026.08.22 (pciutils/pciids c1c12547):
device id -> chip and board name. The chip code names the architecture (GP pascal, GV volta, TU
turing, GA ampere, GH hopper, AD ada, GB blackwell), and the GPU Operator's sandbox device plugin
advertises passthrough GPUs as nvidia.com/ + that pci.ids name (research/cozystack.md §5), so a
resource name starts with the chip too. vGPU type names ("NVIDIA A100-40C", "GRID T4-16Q") start
with the board (NVIDIA vGPU types reference, docs.nvidia.com/ai-enterprise/.../vgpu/reference).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import get_args

from renderer.model import Architecture, Device
from renderer.rules.syntax import either_case

__all__ = [
    "ARCHITECTURES",
    "PCI_DEVICES",
    "Inferred",
    "architecture_of",
    "architecture_patterns",
    "inferred_architecture",
]

_CHIP_ARCHITECTURES: tuple[tuple[str, Architecture], ...] = (
    ("GP1", "pascal"),
    ("GV1", "volta"),
    ("TU1", "turing"),
    ("GA1", "ampere"),
    ("GH1", "hopper"),
    ("AD1", "ada"),
    ("GB1", "blackwell"),
    ("GB2", "blackwell"),
)

PCI_DEVICES: dict[str, tuple[str, str]] = {
    "10DE:15F0": ("GP100GL", "Quadro GP100"),
    "10DE:15F7": ("GP100GL", "Tesla P100 PCIe 12GB"),
    "10DE:15F8": ("GP100GL", "Tesla P100 PCIe 16GB"),
    "10DE:15F9": ("GP100GL", "Tesla P100 SXM2 16GB"),
    "10DE:15FA": ("GP100GL", "DGX Station / PH402 SKU 200"),
    "10DE:15FC": ("GP100GL", "Tesla P100-DGXS-16GB"),
    "10DE:1B30": ("GP102GL", "Quadro P6000"),
    "10DE:1B38": ("GP102GL", "Tesla P40"),
    "10DE:1B39": ("GP102GL", "Tesla P10"),
    "10DE:1BB0": ("GP104GL", "Quadro P5000"),
    "10DE:1BB1": ("GP104GL", "Quadro P4000"),
    "10DE:1BB3": ("GP104GL", "Tesla P4"),
    "10DE:1BB4": ("GP104GL", "Tesla P6"),
    "10DE:1C30": ("GP106GL", "Quadro P2000"),
    "10DE:1C31": ("GP106GL", "Quadro P2200"),
    "10DE:1CB1": ("GP107GL", "Quadro P1000"),
    "10DE:1CB2": ("GP107GL", "Quadro P600"),
    "10DE:1CB3": ("GP107GL", "Quadro P400"),
    "10DE:1CB6": ("GP107GL", "Quadro P620"),
    "10DE:1CFA": ("GP107GL", "Quadro P2000"),
    "10DE:1CFB": ("GP107GL", "Quadro P1000"),
    "10DE:1D81": ("GV100", "TITAN V"),
    "10DE:1DB0": ("GV100GL", "Tesla GV100 SXM2-16GB SKU 890"),
    "10DE:1DB1": ("GV100GL", "Tesla V100 SXM2 16GB"),
    "10DE:1DB2": ("GV100GL", "Tesla V100 DGXS 16GB"),
    "10DE:1DB3": ("GV100GL", "Tesla V100 FHHL 16GB"),
    "10DE:1DB4": ("GV100GL", "Tesla V100 PCIe 16GB"),
    "10DE:1DB5": ("GV100GL", "Tesla V100 SXM2 32GB"),
    "10DE:1DB6": ("GV100GL", "Tesla V100 PCIe 32GB"),
    "10DE:1DB7": ("GV100GL", "Tesla V100 DGXS 32GB"),
    "10DE:1DB8": ("GV100GL", "Tesla V100 SXM3 32GB"),
    "10DE:1DBA": ("GV100GL", "Quadro GV100"),
    "10DE:1DBD": ("GV100GL", "Tesla GV100 DGX1-V"),
    "10DE:1DF5": ("GV100GL", "Tesla V100 SXM2 16GB"),
    "10DE:1DF6": ("GV100GL", "Tesla V100S PCIe 32GB"),
    "10DE:1E30": ("TU102GL", "Quadro RTX 6000/8000"),
    "10DE:1E35": ("TU102GL", "Tesla T10"),
    "10DE:1E36": ("TU102GL", "Quadro RTX 6000"),
    "10DE:1E37": ("TU102GL", "Tesla T10 16GB / GRID RTX T10-2/T10-4/T10-8"),
    "10DE:1E38": ("TU102GL", "Tesla T40 24GB"),
    "10DE:1E78": ("TU102GL", "Quadro RTX 6000/8000"),
    "10DE:1EB0": ("TU104GL", "Quadro RTX 5000"),
    "10DE:1EB1": ("TU104GL", "Quadro RTX 4000"),
    "10DE:1EB4": ("TU104GL", "T4G"),
    "10DE:1EB8": ("TU104GL", "Tesla T4"),
    "10DE:1FB1": ("TU117GL", "T600"),
    "10DE:1FF0": ("TU117GL", "T1000 8GB"),
    "10DE:1FF2": ("TU117GL", "T400 4GB / T400E"),
    "10DE:20B0": ("GA100", "A100 SXM4 40GB"),
    "10DE:20B1": ("GA100", "A100 PCIe 40GB"),
    "10DE:20B2": ("GA100", "A100 SXM4 80GB"),
    "10DE:20B3": ("GA100", "A100-SXM-64GB"),
    "10DE:20B5": ("GA100", "A100 PCIe 80GB"),
    "10DE:20B7": ("GA100GL", "A30 PCIe"),
    "10DE:20B8": ("GA100", "A100X"),
    "10DE:20B9": ("GA100", "A30X"),
    "10DE:20BD": ("GA100", "A800 SXM4 40GB"),
    "10DE:20BE": ("GA100", "GRID A100A"),
    "10DE:20BF": ("GA100", "GRID A100B"),
    "10DE:20F1": ("GA100", "A100 PCIe 40GB"),
    "10DE:20F3": ("GA100", "A800-SXM4-80GB"),
    "10DE:20F5": ("GA100", "A800 80GB PCIe"),
    "10DE:20F6": ("GA100", "A800 40GB PCIe"),
    "10DE:20FD": ("GA100", "AX800 Converged Accelerator"),
    "10DE:2230": ("GA102GL", "RTX A6000"),
    "10DE:2231": ("GA102GL", "RTX A5000"),
    "10DE:2232": ("GA102GL", "RTX A4500"),
    "10DE:2233": ("GA102GL", "RTX A5500"),
    "10DE:2235": ("GA102GL", "A40"),
    "10DE:2236": ("GA102GL", "A10"),
    "10DE:2237": ("GA102GL", "A10G"),
    "10DE:2238": ("GA102GL", "A10M"),
    "10DE:230C": ("GH100", "H20 NVL16"),
    "10DE:230E": ("GH100", "H20 NVL16"),
    "10DE:2313": ("GH100", "H100 CNX"),
    "10DE:2321": ("GH100", "H100L 94GB"),
    "10DE:2322": ("GH100", "H800 PCIe"),
    "10DE:2324": ("GH100", "H800"),
    "10DE:2328": ("GH100", "H20B"),
    "10DE:2329": ("GH100", "H20"),
    "10DE:232C": ("GH100", "H20 HBM3e"),
    "10DE:2330": ("GH100", "H100 SXM5 80GB"),
    "10DE:2331": ("GH100", "H100 PCIe"),
    "10DE:2335": ("GH100", "H200 SXM 141GB"),
    "10DE:2336": ("GH100", "H100"),
    "10DE:2337": ("GH100", "H100 SXM5 64GB"),
    "10DE:2338": ("GH100", "H100 SXM5 96GB"),
    "10DE:2339": ("GH100", "H100 SXM5 94GB"),
    "10DE:233A": ("GH100", "H800L 94GB"),
    "10DE:233B": ("GH100", "H200 NVL"),
    "10DE:233D": ("GH100", "H100 96GB"),
    "10DE:2342": ("GH100", "GH200 120GB / 480GB"),
    "10DE:2348": ("GH100", "GH200 144G HBM3e"),
    "10DE:237E": ("GH100", "H100 GH3"),
    "10DE:24B0": ("GA104GL", "RTX A4000"),
    "10DE:24B1": ("GA104GL", "RTX A4000H"),
    "10DE:25B0": ("GA107GL", "RTX A1000"),
    "10DE:25B2": ("GA107GL", "RTX A400"),
    "10DE:25B6": ("GA107GL", "A2 / A16"),
    "10DE:26B1": ("AD102GL", "RTX 6000 Ada Generation"),
    "10DE:26B2": ("AD102GL", "RTX 5000 Ada Generation"),
    "10DE:26B3": ("AD102GL", "RTX 5880 Ada Generation"),
    "10DE:26B5": ("AD102GL", "L40"),
    "10DE:26B7": ("AD102GL", "L20"),
    "10DE:26B8": ("AD102GL", "L40G"),
    "10DE:26B9": ("AD102GL", "L40S"),
    "10DE:26BA": ("AD102GL", "L20"),
    "10DE:26BB": ("AD102GL", "L30"),
    "10DE:26F5": ("AD102GL", "L40 CNX"),
    "10DE:27B0": ("AD104GL", "RTX 4000 SFF Ada Generation"),
    "10DE:27B1": ("AD104GL", "RTX 4500 Ada Generation"),
    "10DE:27B2": ("AD104GL", "RTX 4000 Ada Generation"),
    "10DE:27B6": ("AD104GL", "L2"),
    "10DE:27B7": ("AD104GL", "L16"),
    "10DE:27B8": ("AD104GL", "L4"),
    "10DE:28B0": ("AD107GL", "RTX 2000 / 2000E Ada Generation"),
    "10DE:2901": ("GB100", "B200"),
    "10DE:2909": ("GB100", "HGX B200 168GB"),
    "10DE:2920": ("GB100", "TS4 / B100"),
    "10DE:2941": ("GB100", "HGX GB200"),
    "10DE:29BC": ("GB102", "B100"),
    "10DE:2BB1": ("GB202GL", "RTX PRO 6000 Blackwell Workstation Edition"),
    "10DE:2BB2": ("GB202GL", "RTX PRO 6000D Blackwell Workstation Edition"),
    "10DE:2BB3": ("GB202GL", "RTX PRO 5000 Blackwell / RTX PRO 5000 72GB Blackwell"),
    "10DE:2BB5": ("GB202GL", "RTX PRO 6000 Blackwell Server Edition"),
    "10DE:2BB9": ("GB202GL", "RTX 6000D"),
    "10DE:2C31": ("GB203GL", "RTX PRO 4500 Blackwell"),
    "10DE:2C33": ("GB203GL", "RTX PRO 4000 Blackwell SFF Edition"),
    "10DE:2C34": ("GB203GL", "RTX PRO 4000 Blackwell"),
    "10DE:2C3A": ("GB203GL", "RTX PRO 4500 Blackwell Server Edition"),
    "10DE:2D30": ("GB206GL", "RTX PRO 2000 Blackwell"),
    "10DE:3182": ("GB110", "B300 SXM6 AC"),
    "10DE:31A1": ("GB110", "GB300 MaxQ"),
    "10DE:31C2": ("GB110", "GB300"),
    "10DE:31C3": ("GB110", "GB300"),
}
"""PCI vendor:device (upper-case hex) -> (chip, board) as pci.ids names them."""

# vGPU boards by the model that opens their type names; "-Ada" marks the Ada RTX 6000.
_VGPU_BOARDS: dict[str, Architecture] = {
    **dict.fromkeys(("P4", "P6", "P40", "P100"), "pascal"),
    **dict.fromkeys(("V100",), "volta"),
    **dict.fromkeys(("T4", "RTX6000", "RTX8000"), "turing"),
    **dict.fromkeys(
        ("A2", "A10", "A16", "A30", "A40", "A100", "A800", "RTXA5000", "RTXA5500", "RTXA6000"),
        "ampere",
    ),
    **dict.fromkeys(("H20", "H100", "H200", "H800", "GH200"), "hopper"),
    **dict.fromkeys(("L2", "L4", "L20", "L40", "L40S"), "ada"),
    **dict.fromkeys(("B100", "B200", "B300", "GB200", "GB300"), "blackwell"),
}
_TYPE = "(?:NVIDIA|GRID) "
_ADA_TYPE = f"{_TYPE}[A-Z]+[0-9]+[A-Z]*-Ada-"


def _chip_architecture(chip: str) -> Architecture | None:
    return next((arch for prefix, arch in _CHIP_ARCHITECTURES if chip.startswith(prefix)), None)


def _alternatives(items: list[str]) -> str:
    return "(?:" + "|".join(items) + ")" if items else "(?!)"


def architecture_patterns(archs: set[str]) -> tuple[str, str, str]:
    """JSON Schema patterns (and re.search ones) of a PCI id, a resource name and a vGPU type
    that imply one of `archs`; each step applies only where the ones before imply nothing."""
    # every key is NVIDIA's: 10DE:<device>
    ids = [
        either_case(key.split(":")[1])
        for key, (chip, _) in PCI_DEVICES.items()
        if _chip_architecture(chip) in archs
    ]
    return (f"^10[dD][eE]:{_alternatives(ids)}$", *_name_patterns(archs))


def _name_patterns(archs: set[str]) -> tuple[str, str]:
    chips = [prefix for prefix, arch in _CHIP_ARCHITECTURES if arch in archs]
    boards = [f"{b}[A-Z]*-(?!Ada-)" for b, arch in _VGPU_BOARDS.items() if arch in archs]
    if "ada" in archs:
        boards.append("[A-Z]+[0-9]+[A-Z]*-Ada-")
    return (
        rf"^nvidia\.com/{_alternatives(chips)}[0-9]{{2}}",
        f"^{_TYPE}{_alternatives(boards)}",
    )


ARCHITECTURES: tuple[Architecture, ...] = get_args(Architecture)
# The PCI id is looked up in PCI_DEVICES, as its pattern (hundreds of ids in either case, about
# 4 ms to compile) would match it; the names are matched by their patterns.
_NAMES_BY_ARCHITECTURE = {arch: _name_patterns({arch}) for arch in ARCHITECTURES}


@dataclass(frozen=True)
class Inferred:
    """An architecture and what it was read from, for messages."""

    architecture: Architecture
    source: str


def inferred_architecture(device: Device) -> Inferred | None:
    """The architecture the device's PCI id, resource name or vGPU type implies, if known."""
    pci = device.pci_vendor_selector or ""
    if arch := _chip_architecture(PCI_DEVICES.get(pci.upper(), ("", ""))[0]):
        return Inferred(arch, _source(0, pci))
    for step, value in ((1, device.resource_name), (2, device.mdev_name_selector)):
        for arch, patterns in _NAMES_BY_ARCHITECTURE.items():
            if value and re.search(patterns[step - 1], value):
                return Inferred(arch, _source(step, value))
    return None


def _source(step: int, value: str) -> str:
    if step == 0:
        chip, board = PCI_DEVICES[value.upper()]
        return f"{value} is the {board}, chip {chip}"
    if step == 1:
        return f"resource {value} names chip {value.split('/')[1][:5]}"
    token = re.match(f"{_TYPE}([A-Z]+[0-9]+)", value)
    known = (
        b
        for b in sorted(_VGPU_BOARDS, key=len, reverse=True)
        if re.match(f"{_TYPE}{b}[A-Z]*-", value)
    )
    board = next(known, token[1] if token else value)
    ada = " Ada" if re.match(_ADA_TYPE, value) else ""
    return f'vGPU type "{value}" is a slice of the {board}{ada}'


def architecture_of(device: Device) -> Inferred | None:
    """The written architecture, else the inferred one."""
    if device.architecture:
        return Inferred(device.architecture, f"architecture: {device.architecture}")
    return inferred_architecture(device)
