// Inventory readers (gpu/inventory.h, issue 45) over the samples in fixtures/inventory/ (each
// written from a section of shared/data/inventory-formats.md, fixtures/inventory/README.md):
// the driver, ceiling (read or derived), compute capabilities, platform and host names.
#include "gpulock/gpu/inventory.h"

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

using namespace gpulock::gpu;

namespace {

std::string sample(std::string_view name) {
  std::ifstream in(std::string(GPULOCK_SOURCE_DIR) + "/fixtures/inventory/" + std::string(name),
                   std::ios::binary);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Inventory read(std::string_view name) {
  const std::string text = sample(name);
  auto inv = parse_inventory(text, name);
  INFO(name << ": " << (inv ? std::string() : inv.error().to_string()));
  REQUIRE(inv);
  return *inv;
}

std::string driver(const InventoryHost& h) {
  return h.machine.driver ? h.machine.driver->to_string() : std::string("-");
}
std::string ceiling(const InventoryHost& h) {
  return h.machine.ceiling ? h.machine.ceiling->to_string() : std::string("-");
}
std::string archs(const InventoryHost& h) {
  std::string out;
  for (const auto& a : h.machine.archs)
    out += (out.empty() ? "" : ",") + a.dotted();
  return out.empty() ? "-" : out;
}
std::string platform(const InventoryHost& h) {
  return h.machine.platform ? h.machine.platform->os + "/" + h.machine.platform->cpu : "-";
}
bool mentions(const std::vector<std::string>& lines, std::string_view what) {
  for (const auto& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("kubectl get nodes -o json: GFD labels per node", "[gpu][inventory]") {
  auto inv = read("kubectl-nodes.json");
  CHECK(inv.format == InventoryFormat::KubectlJson);
  REQUIRE(inv.hosts.size() == 6);
  const auto& a100 = inv.hosts[0];
  CHECK(a100.name == "a100-node-01");
  CHECK(driver(a100) == "550.54.15");
  CHECK(ceiling(a100) == "12.4");
  CHECK(a100.machine.ceiling_method == "stated");
  CHECK(archs(a100) == "8.0");
  CHECK(platform(a100) == "linux/x86_64");
  CHECK(a100.gpus.size() == 8);
  CHECK_FALSE(a100.gpus[0].mig);  // mig.capable=true, mig.config=all-disabled
  const auto& gh = inv.hosts[1];
  CHECK(gh.name == "gh200-node-01");
  CHECK(driver(gh) == "570.86.15");
  CHECK(ceiling(gh) == "12.8");
  CHECK(archs(gh) == "9.0");
  CHECK(platform(gh) == "linux/aarch64");
  const auto& mig = inv.hosts[2];
  CHECK(mig.gpus.at(0).mig);
  CHECK(mentions(mig.warnings, "MIG"));
  CHECK(archs(mig) == "8.0");
  const auto& t4 = inv.hosts[3];
  CHECK(driver(t4) == "470.82.01");
  CHECK(ceiling(t4) == "11.4");
  CHECK(archs(t4) == "7.5");
  const auto& r610 = inv.hosts[4];
  CHECK(driver(r610) == "610.43.02");
  CHECK(ceiling(r610) == "13.3");
  const auto& cpu = inv.hosts[5];
  CHECK(cpu.name == "cpu-node-01");
  CHECK_FALSE(cpu.machine.driver);
  CHECK(platform(cpu) == "linux/x86_64");
  CHECK(mentions(cpu.warnings, "no GPU Feature Discovery labels"));
}

TEST_CASE("kubectl JSON cut off keeps the nodes before the cut", "[gpu][inventory]") {
  auto inv = read("kubectl-cut.json");
  REQUIRE(inv.hosts.size() == 1);
  CHECK(inv.hosts[0].name == "a100-node-01");
  CHECK(mentions(inv.hosts[0].warnings, "stops part way"));
}

TEST_CASE("kubectl YAML is refused with a hint to use JSON", "[gpu][inventory]") {
  const std::string text = sample("kubectl-nodes.yaml");
  auto inv = parse_inventory(text, "nodes.yaml");
  REQUIRE_FALSE(inv);
  CHECK(inv.error().where == "nodes.yaml");
  REQUIRE_FALSE(inv.error().hints.empty());
  CHECK(inv.error().hints[0].find("-o json") != std::string::npos);
}

TEST_CASE("nvidia-smi tables of every layout", "[gpu][inventory]") {
  struct Row {
    std::string_view file, host, driver, ceiling, method, archs;
  };
  const Row rows[] = {
      {"smi-r470-79col.txt", "v100-box", "470.82.01", "11.4", "stated", "7.0"},
      {"smi-r535-89col-mig.txt", "smi-r535-89col-mig", "535.104.05", "12.2", "stated", "8.0"},
      {"smi-r550-91col.txt", "smi-r550-91col", "550.54.15", "12.4", "stated", "9.0"},
      {"smi-r580.txt", "smi-r580", "580.65.06", "13.0", "stated", "12.0"},
      {"smi-r610.txt", "smi-r610", "610.43.02", "13.3", "stated", "10.0"},
      {"smi-jetson-cuda-na.txt", "smi-jetson-cuda-na", "540.4.0", "12.2", "derived", "8.7"},
      {"smi-graphics-device.txt", "smi-graphics-device", "520.61.05", "11.8", "derived", "-"},
  };
  for (const auto& r : rows) {
    INFO(r.file);
    auto inv = read(r.file);
    CHECK(inv.format == InventoryFormat::SmiTable);
    REQUIRE(inv.hosts.size() == 1);
    const auto& h = inv.hosts[0];
    CHECK(h.name == r.host);
    CHECK(driver(h) == r.driver);
    CHECK(ceiling(h) == r.ceiling);
    CHECK(h.machine.ceiling_method == r.method);
    CHECK(archs(h) == r.archs);
    CHECK_FALSE(h.wsl);
  }
  auto mig = read("smi-r535-89col-mig.txt");
  REQUIRE(mig.hosts[0].gpus.size() == 2);
  CHECK(mig.hosts[0].gpus[0].mig);
  CHECK_FALSE(mig.hosts[0].gpus[1].mig);
  auto unknown = read("smi-graphics-device.txt");
  CHECK(mentions(unknown.hosts[0].unknown, "compute capability of GPU 0 ('Graphics Device'"));
  CHECK(mentions(unknown.hosts[0].warnings, "ERR!"));
}

TEST_CASE("nvidia-smi under WSL: the Windows driver, the stated ceiling", "[gpu][inventory]") {
  auto inv = read("smi-wsl.txt");
  REQUIRE(inv.hosts.size() == 1);
  const auto& h = inv.hosts[0];
  CHECK(h.name == "DESKTOP-1234");
  CHECK(h.wsl);
  CHECK_FALSE(h.machine.driver);  // never Linux minimums against a Windows number
  CHECK(ceiling(h) == "12.5");
  CHECK(mentions(h.read, "Windows driver 555.99"));
  CHECK(archs(h) == "8.6");
}

TEST_CASE("a table cut before its GPU rows names what it lacks", "[gpu][inventory]") {
  auto inv = read("smi-cut.txt");
  REQUIRE(inv.hosts.size() == 1);
  CHECK(driver(inv.hosts[0]) == "570.124.06");
  CHECK(ceiling(inv.hosts[0]) == "12.8");
  CHECK(archs(inv.hosts[0]) == "-");
  CHECK(mentions(inv.hosts[0].unknown, "GPUs"));
}

TEST_CASE("nvidia-smi --query-gpu CSV", "[gpu][inventory]") {
  auto units = read("csv-header-units.csv");
  CHECK(units.format == InventoryFormat::SmiCsv);
  REQUIRE(units.hosts.size() == 1);
  CHECK(units.hosts[0].name == "csv-header-units");
  CHECK(driver(units.hosts[0]) == "550.90.07");
  CHECK(ceiling(units.hosts[0]) == "12.4");
  CHECK(units.hosts[0].machine.ceiling_method == "derived");
  CHECK(archs(units.hosts[0]) == "8.9");
  CHECK(units.hosts[0].gpus.at(0).cc_stated);

  auto bare = read("csv-noheader.csv");
  REQUIRE(bare.hosts.size() == 1);
  CHECK(driver(bare.hosts[0]) == "535.183.01");
  CHECK(ceiling(bare.hosts[0]) == "12.2");
  CHECK(archs(bare.hosts[0]) == "8.6");

  auto hosts = read("csv-hosts.csv");
  REQUIRE(hosts.hosts.size() == 3);
  CHECK(hosts.hosts[0].name == "node01");
  CHECK(driver(hosts.hosts[0]) == "580.142");
  CHECK(ceiling(hosts.hosts[0]) == "13.0");
  CHECK(archs(hosts.hosts[0]) == "9.0");
  CHECK(hosts.hosts[0].gpus.size() == 2);
  CHECK(hosts.hosts[1].name == "node02");
  CHECK(ceiling(hosts.hosts[1]) == "12.0");
  CHECK(archs(hosts.hosts[1]) == "8.6");
  const auto& r615 = hosts.hosts[2];
  CHECK(driver(r615) == "615.12");
  CHECK(mentions(r615.unknown, "ceiling unknown (driver newer than gpulock's table)"));
  CHECK(ceiling(r615) == "13.3");  // judged as at least the newest known
  CHECK(r615.machine.ceiling_method == "assumed");
  CHECK(archs(r615) == "-");
}

TEST_CASE("nvidia-smi CSV rows: one reader for fleet and probe", "[gpu][inventory]") {
  // probe --machine's query, no header: its columns are given; a name with a comma keeps it.
  const std::vector<std::string_view> probe = {"driver_version", "name", "compute_cap", "uuid"};
  auto mine =
      read_smi_csv_rows("570.26, Odd, Name, 8.6, GPU-b\n\n550.54.14, H100, [N/A], [N/A]\n", probe);
  CHECK(mine.other_lines.empty());
  REQUIRE(mine.rows.size() == 2);
  CHECK(mine.rows[0].name == "Odd, Name");
  CHECK(mine.rows[0].cc == "8.6");
  CHECK(mine.rows[0].uuid == "GPU-b");
  CHECK(mine.rows[1].line == 3);
  CHECK(mine.rows[1].cc == "[N/A]");
  // A row cut short and a line of another text are listed, not read.
  auto cut = read_smi_csv_rows(
      "$ nvidia-smi --query-gpu=driver_version,name,compute_cap,uuid\n"
      "550.54.14, H100\n",
      probe);
  CHECK(cut.rows.empty());
  REQUIRE(cut.other_lines.size() == 2);
  CHECK(cut.other_lines[1].first == 2);
  CHECK(cut.other_lines[1].second == "550.54.14, H100");

  // fleet: a header names the columns in any order; a name with a comma joins, quotes go.
  auto fleet = read_smi_csv_rows(
      "host, uuid, name, driver_version\nn1, GPU-1, \"NVIDIA A100, PCIe\", 550.90.07\n"
      "n2, GPU-2, NVIDIA L4, Extra, 535.183.01\n");
  REQUIRE(fleet.rows.size() == 2);
  CHECK(fleet.rows[0].host == "n1");
  CHECK(fleet.rows[0].name == "NVIDIA A100, PCIe");
  CHECK(fleet.rows[1].name == "NVIDIA L4, Extra");
  CHECK(fleet.rows[1].driver == "535.183.01");
  CHECK(fleet.rows[1].uuid == "GPU-2");
  // The inventory built from it keeps both GPUs (before the shared reader, the second row's
  // extra field made it skipped as another text's line).
  auto inv = parse_inventory(
      "name, driver_version, compute_cap\nNVIDIA L4, Extra, 535.183.01, 8.9\n", "n3.csv");
  REQUIRE(inv);
  REQUIRE(inv->hosts.size() == 1);
  REQUIRE(inv->hosts[0].gpus.size() == 1);
  CHECK(inv->hosts[0].gpus[0].name == "NVIDIA L4, Extra");
}

TEST_CASE("fleet probe: a node's failed probe --lock lines", "[gpu][inventory]") {
  const std::string doc =
      R"({"schema": "gpulock.probe/1", "ok": false, "findings": [)"
      R"({"id": "lock-missing", "severity": "fail", "subject": "torch", "message": "torch 2.5.1 )"
      R"(is in the lock but not installed.", "hint": ""},)"
      R"({"id": "no-cudnn", "severity": "info", "subject": "", "message": "No cuDNN.", "hint": ""},)"
      R"({"id": "cudnn-shadowed", "severity": "fail", "subject": "", "message": "x", "hint": ""}]})";
  auto failures = lock_probe_failures(doc);
  REQUIRE(failures.size() == 2);
  CHECK(failures[0] == "lock-missing: torch 2.5.1 is in the lock but not installed.");
  CHECK(failures[1] == "cudnn-shadowed: x");
  CHECK(lock_probe_failures("").empty());
  CHECK(lock_probe_failures(R"({"findings": 3})").empty());
  CHECK(lock_probe_failures(doc.substr(0, doc.size() / 2)).empty());  // cut off: not read
}

TEST_CASE("/proc/driver/nvidia: proprietary, open, R615, Jetson", "[gpu][inventory]") {
  auto prop = read("proc-proprietary.txt");
  CHECK(prop.format == InventoryFormat::Proc);
  REQUIRE(prop.hosts.size() == 1);
  CHECK(driver(prop.hosts[0]) == "580.173.02");
  CHECK(ceiling(prop.hosts[0]) == "13.0");
  CHECK(archs(prop.hosts[0]) == "8.9");
  CHECK(platform(prop.hosts[0]) == "linux/x86_64");
  CHECK(mentions(prop.hosts[0].warnings, "NVML"));

  auto open = read("proc-open-aarch64.txt");
  CHECK(driver(open.hosts.at(0)) == "580.142");
  CHECK(platform(open.hosts[0]) == "linux/aarch64");
  CHECK(archs(open.hosts[0]) == "9.0");

  auto r615 = read("proc-r615.txt");
  CHECK(driver(r615.hosts.at(0)) == "615.20.01");
  CHECK(mentions(r615.hosts[0].unknown, "driver newer than gpulock's table"));
  CHECK(mentions(r615.hosts[0].unknown, "GPUs"));

  auto jetson = read("proc-jetson.txt");
  CHECK(jetson.hosts.at(0).l4t == "35.3.1");
  CHECK_FALSE(jetson.hosts[0].machine.driver);
  CHECK(platform(jetson.hosts[0]) == "linux/aarch64");
}

TEST_CASE("nvidia-smi -q -x: several GPUs, MIG, entities never expanded", "[gpu][inventory]") {
  auto inv = read("smi-q-x.xml");
  CHECK(inv.format == InventoryFormat::SmiXml);
  REQUIRE(inv.hosts.size() == 1);
  const auto& h = inv.hosts[0];
  CHECK(driver(h) == "560.35.03");
  CHECK(ceiling(h) == "12.6");
  REQUIRE(h.gpus.size() == 2);
  CHECK(h.gpus[0].mig);
  CHECK_FALSE(h.gpus[1].mig);
  CHECK(h.gpus[1].name == "NVIDIA A100 80GB PCIe &boom;");
  CHECK(archs(h) == "8.0");
}

TEST_CASE("nvidia-smi -L: GPUs only", "[gpu][inventory]") {
  auto inv = read("smi-L.txt");
  CHECK(inv.format == InventoryFormat::SmiList);
  REQUIRE(inv.hosts.size() == 1);
  CHECK(inv.hosts[0].gpus.size() == 2);
  CHECK(inv.hosts[0].gpus[0].mig);
  CHECK(archs(inv.hosts[0]) == "8.0");
  CHECK_FALSE(inv.hosts[0].machine.driver);
}

TEST_CASE("no fact at all is an error naming the file", "[gpu][inventory]") {
  auto inv = parse_inventory("hello\nworld\n", "notes.txt");
  REQUIRE_FALSE(inv);
  CHECK(inv.error().where == "notes.txt");
  auto empty = parse_inventory("", "empty.txt");
  REQUIRE_FALSE(empty);
  auto forced = parse_inventory("hello", "x.csv", InventoryFormat::SmiCsv);
  REQUIRE_FALSE(forced);
}

TEST_CASE("product names to compute capability (gpu-names.md)", "[gpu][inventory]") {
  auto cc = [](std::string_view n) {
    auto c = compute_capability_of_name(n);
    return c ? c->dotted() : std::string("-");
  };
  CHECK(cc("NVIDIA A100-SXM4-80GB") == "8.0");
  CHECK(cc("NVIDIA-H100-80GB-HBM3") == "9.0");
  CHECK(cc("Tesla-T4") == "7.5");
  CHECK(cc("Tesla T4") == "7.5");
  CHECK(cc("TITAN Xp") == "6.1");
  CHECK(cc("NVIDIA RTX 6000 Ada Generation") == "8.9");
  CHECK(cc("Quadro RTX 6000") == "7.5");
  CHECK(cc("NVIDIA RTX A6000") == "8.6");
  CHECK(cc("NVIDIA RTX PRO 6000 Blac...") == "12.0");
  CHECK(cc("NVIDIA A100 80G...") == "8.0");
  CHECK(cc("NVIDIA GeForce RTX 40...") == "-");  // 4090 (8.9) or RTX 4000 (7.5)
  CHECK(cc("NVIDIA A10G") == "8.6");
  CHECK(cc("NVIDIA GB10") == "12.1");
  CHECK(cc("Orin (nvgpu)") == "8.7");
  CHECK(cc("NVIDIA GeForce GTX TITAN X") == "5.2");
  CHECK(cc("Graphics Device") == "-");
  CHECK(cc("") == "-");
}

TEST_CASE("ceilings of driver branches", "[gpu][inventory]") {
  auto of = [](std::string_view d) { return ceiling_of_branch(*DriverVersion::parse(d)); };
  CHECK(of("550.135").ceiling == CudaVersion{12, 4});
  CHECK(of("580.142").ceiling == CudaVersion{13, 0});
  CHECK(of("470.74").ceiling == CudaVersion{11, 4});
  CHECK(of("610.43.02").ceiling == CudaVersion{13, 3});
  CHECK_FALSE(of("610.43.02").newer_than_table);
  CHECK(of("615.12").newer_than_table);
  CHECK_FALSE(of("384.81").ceiling);
}

TEST_CASE("the names --inventory-format takes", "[gpu][inventory]") {
  CHECK(parse_inventory_format("kubectl-json").value() == InventoryFormat::KubectlJson);
  CHECK(parse_inventory_format("nvidia-smi").value() == InventoryFormat::SmiTable);
  CHECK_FALSE(parse_inventory_format("yaml"));
}

TEST_CASE("kubectl describe nodes: the Labels: block", "[gpu][inventory]") {
  auto inv = read("kubectl-describe.txt");
  CHECK(inv.format == InventoryFormat::KubectlDescribe);
  REQUIRE(inv.hosts.size() == 2);
  CHECK(inv.hosts[0].name == "l4-node-01");
  CHECK(driver(inv.hosts[0]) == "560.35.03");
  CHECK(ceiling(inv.hosts[0]) == "12.6");
  CHECK(archs(inv.hosts[0]) == "8.9");
  CHECK(inv.hosts[0].gpus.size() == 4);
  CHECK(inv.hosts[1].name == "gb200-node-01");
  CHECK(platform(inv.hosts[1]) == "linux/aarch64");
  CHECK(archs(inv.hosts[1]) == "10.0");  // from the product name
}

TEST_CASE("gpulock probe --machine --json, two documents", "[gpu][inventory]") {
  auto inv = read("probe-machine.json");
  CHECK(inv.format == InventoryFormat::ProbeJson);
  REQUIRE(inv.hosts.size() == 2);
  CHECK(inv.hosts[0].name == "probe-machine");
  CHECK(driver(inv.hosts[0]) == "570.133.20");
  CHECK(ceiling(inv.hosts[0]) == "12.8");
  CHECK(archs(inv.hosts[0]) == "8.9");
  CHECK(inv.hosts[1].name == "probe-machine#2");
  CHECK(driver(inv.hosts[1]) == "535.230.02");
  CHECK(archs(inv.hosts[1]) == "-");
  // The OS and CPU probe --machine writes since 2026-12; the older first document has none.
  CHECK(platform(inv.hosts[1]) == "linux/aarch64");
  CHECK(mentions(inv.hosts[1].read, "platform linux/aarch64"));
  CHECK_FALSE(inv.hosts[0].machine.platform);
  CHECK(mentions(inv.hosts[0].unknown, "platform (OS and CPU)"));
}

TEST_CASE("nvidia-smi -q: vGPU 'Not Found', WSL's WDDM", "[gpu][inventory]") {
  auto vgpu = read("smi-q-vgpu.txt");
  CHECK(vgpu.format == InventoryFormat::SmiQuery);
  REQUIRE(vgpu.hosts.size() == 1);
  CHECK(driver(vgpu.hosts[0]) == "550.144.03");
  CHECK(ceiling(vgpu.hosts[0]) == "12.4");
  CHECK(vgpu.hosts[0].machine.ceiling_method == "derived");
  CHECK(mentions(vgpu.hosts[0].warnings, "Not Found"));
  CHECK(vgpu.hosts[0].gpus.size() == 2);
  CHECK(archs(vgpu.hosts[0]) == "8.6");
  auto wsl = read("smi-q-wsl.txt");
  REQUIRE(wsl.hosts.size() == 1);
  CHECK(wsl.hosts[0].wsl);
  CHECK_FALSE(wsl.hosts[0].machine.driver);
  CHECK(ceiling(wsl.hosts[0]) == "12.5");
  CHECK(archs(wsl.hosts[0]) == "8.9");
}

TEST_CASE("collect_env: the toolkit's CUDA is not the ceiling", "[gpu][inventory]") {
  auto inv = read("collect-env.txt");
  CHECK(inv.format == InventoryFormat::CollectEnv);
  REQUIRE(inv.hosts.size() == 1);
  CHECK(driver(inv.hosts[0]) == "580.95.05");
  CHECK(ceiling(inv.hosts[0]) == "13.0");  // not the 13.1.115 runtime
  CHECK(inv.hosts[0].machine.ceiling_method == "derived");
  CHECK(inv.hosts[0].gpus.size() == 2);
  CHECK(archs(inv.hosts[0]) == "9.0");
  CHECK(platform(inv.hosts[0]) == "linux/x86_64");
  auto vllm = read("collect-env-vllm-wsl.txt");
  REQUIRE(vllm.hosts.size() == 1);
  CHECK(vllm.hosts[0].wsl);
  CHECK(mentions(vllm.hosts[0].read, "Windows driver 551.88"));
  CHECK(archs(vllm.hosts[0]) == "8.6");
}

TEST_CASE("scontrol show node -o: Gres types and driver features", "[gpu][inventory]") {
  auto inv = read("slurm-nodes.txt");
  CHECK(inv.format == InventoryFormat::Slurm);
  REQUIRE(inv.hosts.size() == 3);
  CHECK(inv.hosts[0].name == "gpu01");
  CHECK(driver(inv.hosts[0]) == "550.54.15");
  CHECK(ceiling(inv.hosts[0]) == "12.4");
  CHECK(archs(inv.hosts[0]) == "8.0");
  CHECK(inv.hosts[0].gpus.size() == 8);
  CHECK(inv.hosts[1].name == "gpu02");
  CHECK(platform(inv.hosts[1]) == "linux/aarch64");
  CHECK(archs(inv.hosts[1]) == "9.0");
  CHECK(mentions(inv.hosts[1].unknown, "driver version"));
  CHECK(inv.hosts[2].name == "cpu01");
  CHECK(inv.hosts[2].machine.no_gpu);
}

TEST_CASE("read_proc_module: the one /proc module reader (fleet and probe)", "[gpu][inventory]") {
  auto prop = read_proc_module("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.173.02  Wed");
  REQUIRE(prop);
  CHECK(prop->driver->to_string() == "580.173.02");
  CHECK(prop->cpu == "x86_64");
  auto open = read_proc_module(
      "GCC version: x\nNVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.142  Release");
  REQUIRE(open);
  CHECK(open->driver->to_string() == "580.142");
  CHECK(open->cpu == "aarch64");
  auto jetson =
      read_proc_module("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  35.3.1");
  REQUIRE(jetson);
  CHECK_FALSE(jetson->driver);
  CHECK(jetson->l4t == "35.3.1");
  CHECK_FALSE(read_proc_module("NVRM version: unknown"));
  auto none = read_proc_module("NVIDIA UNIX Kernel Module");
  REQUIRE(none);
  CHECK_FALSE(none->driver);
}

TEST_CASE("scontrol with a site's feature map", "[gpu][inventory]") {
  auto map = parse_feature_map(
      "# site names\ncuda124 ceiling=12.4\nr550 driver=550.54.15\n"
      "gh200 gpu=NVIDIA GH200 480GB\nbig gpu=Graphics Device\n",
      "site.map");
  REQUIRE(map);
  CHECK(map->find("r550", "driver") == "550.54.15");
  const std::string text =
      "NodeName=n1 Arch=aarch64 ActiveFeatures=r550,cuda124 Gres=gpu:gh200:4\n";
  auto inv = parse_inventory(text, "nodes.txt", InventoryFormat::Auto, &*map);
  REQUIRE(inv);
  REQUIRE(inv->hosts.size() == 1);
  CHECK(driver(inv->hosts[0]) == "550.54.15");
  CHECK(ceiling(inv->hosts[0]) == "12.4");
  CHECK(inv->hosts[0].machine.ceiling_method == "stated");
  CHECK(inv->hosts[0].gpus.at(0).name == "NVIDIA GH200 480GB");
  CHECK(archs(inv->hosts[0]) == "9.0");
  auto bad = parse_feature_map("ok driver=550\nx speed=fast\n", "site.map");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().line == 2);
  CHECK_FALSE(parse_feature_map("r550 driver=abc\n", "m"));
}

TEST_CASE("fleet probe's gathered entries: named by node, failures kept", "[gpu][inventory]") {
  const std::string doc = sample("probe-machine.json");
  const std::string one = doc.substr(0, doc.find("\n{") + 1);
  CHECK(check_probe_document(one, "gpu01"));
  // Two documents, a cut one, text around it, another schema: refused, naming the node.
  auto two = check_probe_document(doc, "gpu01");
  REQUIRE_FALSE(two);
  CHECK(two.error().where == "gpu01");
  CHECK_FALSE(check_probe_document(one.substr(0, one.size() / 2), "gpu01"));
  CHECK_FALSE(check_probe_document("$ gpulock probe\n" + one, "gpu01"));
  CHECK_FALSE(check_probe_document(one + "x", "gpu01"));
  CHECK_FALSE(check_probe_document("{\"schema\": \"gpulock.fleet-check/1\"}", "gpu01"));
  CHECK_FALSE(check_probe_document("", "gpu01"));

  ProbeEntry ok{"gpu01", one, "", {{"pylock.toml", 1, "the environment does not match"}}};
  ProbeEntry no_driver{"cpu01",
                       "{\"schema\": \"gpulock.machine/1\", \"status\": \"no-driver\", "
                       "\"driver\": null, \"cuda_ceiling\": null, \"gpus\": []}",
                       "",
                       {}};
  REQUIRE(check_probe_document(no_driver.document, "cpu01"));
  ProbeEntry failed{"gpu02", "", "probe exited 127: \"gpulock\": not found\n\x01\xff", {}};
  const std::string text =
      probe_entry_text(ok) + probe_entry_text(no_driver) + probe_entry_text(failed);
  auto inv = parse_inventory(text, "fleet.json");
  INFO(text);
  REQUIRE(inv);
  CHECK(inv->format == InventoryFormat::ProbeJson);
  REQUIRE(inv->hosts.size() == 3);
  CHECK(inv->hosts[0].name == "gpu01");
  CHECK(driver(inv->hosts[0]) == "570.133.20");
  CHECK(archs(inv->hosts[0]) == "8.9");
  CHECK(inv->hosts[1].name == "cpu01");
  CHECK(inv->hosts[1].machine.no_gpu);
  CHECK(mentions(inv->hosts[1].read, "no NVIDIA driver"));
  CHECK_FALSE(mentions(inv->hosts[1].unknown, "driver version"));
  CHECK_FALSE(mentions(inv->hosts[1].unknown, "CUDA ceiling"));
  CHECK(inv->hosts[2].name == "gpu02");
  CHECK(mentions(inv->hosts[2].warnings, "the probe failed on the node: probe exited 127"));
  CHECK(text.find('\xff') == std::string::npos);
  // A file of failed nodes alone still names them (not "no fact").
  auto only_failed = parse_inventory(probe_entry_text(failed), "fleet.json");
  REQUIRE(only_failed);
  CHECK(only_failed->hosts.at(0).name == "gpu02");
}

TEST_CASE("scontrol show node -o keeps each node's ActiveFeatures", "[gpu][inventory]") {
  auto inv = read("slurm-nodes.txt");
  REQUIRE(inv.hosts.size() == 3);
  CHECK(inv.hosts[0].featured);
  CHECK(inv.hosts[0].features == std::vector<std::string>{"a100", "ib", "nvidia-driver-550.54.15"});
  CHECK(inv.hosts[2].featured);
  CHECK(inv.hosts[2].features.empty());  // "(null)"
  CHECK_FALSE(read("probe-machine.json").hosts[0].featured);
}
