#pragma once
/// The PCIe path between two PCI functions in NCCL's words (NCCL's topology, the PATH_*
/// types of `NCCL_P2P_LEVEL` and `NCCL_NET_GDR_LEVEL`), closest first:
///   PIX  through at most one PCIe switch (NCCL folds a switch's upstream and downstream
///        ports into one node, so two devices on one switch are PIX);
///   PXB  through several switches, without the host bridge;
///   PHB  through the host bridge (the root complex, so through the CPU);
///   NODE different root complexes of one NUMA node;
///   SYS  across NUMA nodes (the socket interconnect).
/// Plain C++ on gpu::pci_location; no I/O.
#include "gpu/topology.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace meshperf::node {

/// NCCL's path types, closest first; `unknown` when a position or a NUMA node is not known.
enum class pci_path { pix, pxb, phb, node, sys, unknown };

/// "PIX", "PXB", "PHB", "NODE", "SYS", "unknown".
std::string_view to_string(pci_path);

/// The path between `a` and `b`. Different root complexes with a NUMA node unknown on
/// either side is `unknown` (it is NODE or SYS, and the difference matters).
pci_path path_between(const gpu::pci_location& a, const gpu::pci_location& b);

/// Whether `p` crosses the CPU (PHB, NODE, SYS): GPUDirect RDMA between such a GPU and NIC
/// goes through the root complex or further. `unknown` counts as crossing.
bool crosses_cpu(pci_path p);

/// The PCIe bridges traffic between `a` and `b` passes when both sit under one root
/// complex: the deepest bridge they share and every bridge below it on either side, by bus
/// id (these are where ACS can redirect peer-to-peer traffic up to the root complex).
/// Empty for different root complexes.
std::vector<std::string> bridges_between(const gpu::pci_location& a, const gpu::pci_location& b);

}  // namespace meshperf::node
