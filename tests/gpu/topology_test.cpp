// PCIe topology from sysfs, on a fake sysfs tree built in a temporary directory with the
// same shape as the kernel's: devices/ holds the PCI hierarchy, bus/pci/devices and
// class/{net,infiniband} hold relative symlinks into it.
#include "gpu/topology.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <random>
#include <string>

namespace fs = std::filesystem;
using namespace meshperf::gpu;

namespace {

class fake_sysfs {
public:
    fake_sysfs() {
        std::random_device rd;
        root_ = fs::temp_directory_path() / ("meshperf-sysfs-" + std::to_string(rd()) + std::to_string(rd()));
        fs::create_directories(root_);
    }
    ~fake_sysfs() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    const fs::path& root() const { return root_; }

    // A PCI function at devices/<path> (path: "pci0000:16/0000:16:01.0/0000:17:00.0"),
    // linked from bus/pci/devices/<last component>.
    void pci(const std::string& path, int numa = -2) {
        const fs::path dir = root_ / "devices" / path;
        fs::create_directories(dir);
        if (numa != -2) std::ofstream(dir / "numa_node") << numa << "\n";
        const fs::path bus = root_ / "bus/pci/devices";
        fs::create_directories(bus);
        const std::string id = fs::path(path).filename().string();
        if (!fs::exists(bus / id, ec_)) fs::create_directory_symlink(fs::path("../../../devices") / path, bus / id);
    }
    // A class device (class: "net" or "infiniband") under the PCI function at pci_path,
    // as the kernel lays it out: devices/<pci>/<class>/<name>/device -> ../../../<fn>.
    void class_device(const std::string& cls, const std::string& name, const std::string& pci_path) {
        const fs::path dir = root_ / "devices" / pci_path / cls / name;
        fs::create_directories(dir);
        fs::create_directory_symlink(fs::path("../../..") / fs::path(pci_path).filename(), dir / "device");
        fs::create_directories(root_ / "class" / cls);
        fs::create_directory_symlink(fs::path("../../devices") / pci_path / cls / name, root_ / "class" / cls / name);
    }
    void virtual_net(const std::string& name) {
        fs::create_directories(root_ / "devices/virtual/net" / name);
        fs::create_directories(root_ / "class/net");
        fs::create_directory_symlink(fs::path("../../devices/virtual/net") / name, root_ / "class/net" / name);
    }

private:
    fs::path root_;
    std::error_code ec_;
};

// Two sockets. Socket 0: root complex pci0000:16 with a PCIe switch (17:00.0 upstream,
// 18:00.0 and 18:04.0 downstream) holding a GPU and a NIC, and a second root port with
// another NIC; root complex pci0000:3a with a third NIC. Socket 1: pci0000:b0 with a NIC.
void build_cluster_node(fake_sysfs& s) {
    s.pci("pci0000:16/0000:16:01.0", 0);
    s.pci("pci0000:16/0000:16:01.0/0000:17:00.0", 0);
    s.pci("pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:00.0", 0);
    s.pci("pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:00.0/0000:19:00.0", 0);  // GPU
    s.pci("pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:04.0", 0);
    s.pci("pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:04.0/0000:1a:00.0", 0);  // NIC, same switch
    s.class_device("net", "ens1f0", "pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:04.0/0000:1a:00.0");
    s.class_device("infiniband", "mlx5_0", "pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:04.0/0000:1a:00.0");
    s.pci("pci0000:16/0000:16:02.0", 0);
    s.pci("pci0000:16/0000:16:02.0/0000:1b:00.0", 0);  // NIC, other root port
    s.class_device("infiniband", "mlx5_1", "pci0000:16/0000:16:02.0/0000:1b:00.0");
    s.pci("pci0000:3a/0000:3a:00.0", 0);
    s.pci("pci0000:3a/0000:3a:00.0/0000:3b:00.0", 0);  // NIC, other root complex, same NUMA node
    s.class_device("infiniband", "mlx5_2", "pci0000:3a/0000:3a:00.0/0000:3b:00.0");
    s.pci("pci0000:b0/0000:b0:02.0", 1);
    s.pci("pci0000:b0/0000:b0:02.0/0000:b1:00.0", 1);  // NIC on the other socket
    s.class_device("net", "ens7", "pci0000:b0/0000:b0:02.0/0000:b1:00.0");
    s.class_device("infiniband", "mlx5_3", "pci0000:b0/0000:b0:02.0/0000:b1:00.0");
    s.pci("pci0000:c0/0000:c0:01.0");
    s.pci("pci0000:c0/0000:c0:01.0/0000:c1:00.0");  // no numa_node file
    s.class_device("infiniband", "mlx5_4", "pci0000:c0/0000:c0:01.0/0000:c1:00.0");
    s.virtual_net("lo");
    s.virtual_net("bond0");
}

}  // namespace

TEST_CASE("topology: bus id normalization") {
    CHECK(normalize_bus_id("0000:17:00.0") == "0000:17:00.0");
    CHECK(normalize_bus_id("00000000:17:00.0") == "0000:17:00.0");  // nvidia-smi
    CHECK(normalize_bus_id("0000:B1:00.0") == "0000:b1:00.0");      // CUDA prints uppercase
    CHECK(normalize_bus_id("17:00.0") == "0000:17:00.0");
    CHECK(normalize_bus_id("1:0.1") == "0000:01:00.1");
    CHECK(normalize_bus_id("10000:e0:00.0") == "10000:e0:00.0");    // Intel VMD domain
    CHECK_FALSE(normalize_bus_id("").has_value());
    CHECK_FALSE(normalize_bus_id("pci0000:16").has_value());
    CHECK_FALSE(normalize_bus_id("0000:17:00").has_value());
    CHECK_FALSE(normalize_bus_id("0000:17:00.10").has_value());
    CHECK_FALSE(normalize_bus_id("0000:1g:00.0").has_value());
    CHECK_FALSE(normalize_bus_id("0000:117:00.0").has_value());
}

TEST_CASE("topology: locate a GPU by bus id, with its bridges and NUMA node") {
    fake_sysfs s;
    build_cluster_node(s);
    const auto gpu = locate_pci_device("00000000:19:00.0", s.root());
    REQUIRE(gpu.has_value());
    CHECK(gpu->bus_id == "0000:19:00.0");
    CHECK(gpu->root_complex == "pci0000:16");
    CHECK(gpu->bridges == std::vector<std::string>{"0000:16:01.0", "0000:17:00.0", "0000:18:00.0"});
    CHECK(gpu->numa_node == 0);
    CHECK(numa_node_of("0000:19:00.0", s.root()) == 0);
    CHECK(numa_node_of("0000:b1:00.0", s.root()) == 1);
    CHECK(numa_node_of("0000:c1:00.0", s.root()) == -1);  // no numa_node file
    CHECK(numa_node_of("0000:99:00.0", s.root()) == -1);  // absent
    CHECK_FALSE(locate_pci_device("0000:99:00.0", s.root()).has_value());
    CHECK_FALSE(locate_pci_device("garbage", s.root()).has_value());
}

TEST_CASE("topology: locate NICs by RDMA device and by interface name") {
    fake_sysfs s;
    build_cluster_node(s);
    auto nic = locate_rdma_device("mlx5_0", s.root());
    REQUIRE(nic.has_value());
    CHECK(nic->bus_id == "0000:1a:00.0");
    CHECK(nic->root_complex == "pci0000:16");
    nic = locate_net_interface("ens7", s.root());
    REQUIRE(nic.has_value());
    CHECK(nic->bus_id == "0000:b1:00.0");
    CHECK(nic->numa_node == 1);
    CHECK(locate_nic("ens1f0", s.root())->bus_id == "0000:1a:00.0");
    CHECK(locate_nic("mlx5_3", s.root())->bus_id == "0000:b1:00.0");
    CHECK_FALSE(locate_nic("lo", s.root()).has_value());     // virtual: no device link
    CHECK_FALSE(locate_nic("bond0", s.root()).has_value());
    CHECK_FALSE(locate_nic("eth9", s.root()).has_value());
    CHECK_FALSE(locate_nic("../../etc", s.root()).has_value());
}

TEST_CASE("topology: a virtio NIC is the PCI function above its virtio device") {
    fake_sysfs s;
    s.pci("pci0000:00/0000:00:03.0", 0);
    fs::create_directories(s.root() / "devices/pci0000:00/0000:00:03.0/virtio0/net/ens3");
    fs::create_directory_symlink("../../../virtio0", s.root() / "devices/pci0000:00/0000:00:03.0/virtio0/net/ens3/device");
    fs::create_directories(s.root() / "class/net");
    fs::create_directory_symlink("../../devices/pci0000:00/0000:00:03.0/virtio0/net/ens3", s.root() / "class/net/ens3");
    const auto nic = locate_net_interface("ens3", s.root());
    REQUIRE(nic.has_value());
    CHECK(nic->bus_id == "0000:00:03.0");
    CHECK(nic->bridges.empty());
    CHECK(nic->numa_node == 0);
}

TEST_CASE("topology: GPU and NIC relations and the root complex warning") {
    fake_sysfs s;
    build_cluster_node(s);
    const std::string gpu = "0000:19:00.0";

    auto a = gpu_nic_affinity(gpu, "cuda:0", "mlx5_0", s.root());
    CHECK(a.relation == pci_relation::same_switch);
    CHECK(a.shares_root_complex);
    CHECK(a.warning.empty());
    CHECK(a.description.find("share the PCIe bridge 0000:17:00.0") != std::string::npos);

    a = gpu_nic_affinity(gpu, "cuda:0", "mlx5_1", s.root());
    CHECK(a.relation == pci_relation::same_root_complex);
    CHECK(a.shares_root_complex);
    CHECK(a.warning.empty());

    a = gpu_nic_affinity(gpu, "cuda:0", "mlx5_2", s.root());
    CHECK(a.relation == pci_relation::same_numa_node);
    CHECK_FALSE(a.shares_root_complex);
    CHECK(a.warning.find("different PCIe root complexes") != std::string::npos);
    CHECK(a.warning.find("pci0000:16") != std::string::npos);
    CHECK(a.warning.find("pci0000:3a") != std::string::npos);

    a = gpu_nic_affinity(gpu, "cuda:0", "ens7", s.root());
    CHECK(a.relation == pci_relation::cross_numa);
    CHECK(a.warning.find("cuda:0 (0000:19:00.0 under pci0000:16, NUMA node 0)") != std::string::npos);
    CHECK(a.warning.find("ens7 (0000:b1:00.0 under pci0000:b0, NUMA node 1)") != std::string::npos);
    CHECK(a.warning.find("socket interconnect") != std::string::npos);

    a = gpu_nic_affinity(gpu, "cuda:0", "mlx5_4", s.root());
    CHECK(a.relation == pci_relation::different_root_complex);  // NUMA unknown
    CHECK_FALSE(a.warning.empty());

    a = gpu_nic_affinity(gpu, "cuda:0", "bond0", s.root());
    CHECK(a.relation == pci_relation::unknown);
    CHECK(a.warning.empty());
    CHECK(a.description.find("bond0") != std::string::npos);

    a = gpu_nic_affinity("0000:99:00.0", "cuda:1", "mlx5_0", s.root());
    CHECK(a.relation == pci_relation::unknown);
    CHECK(a.description.find("cuda:1") != std::string::npos);
}

TEST_CASE("topology: relation names") {
    CHECK(to_string(pci_relation::same_switch) == "same_switch");
    CHECK(to_string(pci_relation::cross_numa) == "cross_numa");
    CHECK(to_string(pci_relation::unknown) == "unknown");
}
