// coalesce's NCCL calls with one process per GPU, the way an MPI program runs them: each process
// holds one rank of a communicator from ncclCommInitRank and one block of a global domain, and
// after each exchange checks its own block exactly against values computed from global indices:
// - exchange_row_halos on two blocks of rows (not periodic): the inner halos hold the other
//   block's edge rows, the outer halos are untouched;
// - row_halo_exchange, periodic, started on an exchange stream and finished on the work stream
//   that reads the halos back;
// - column_halo_exchange on two blocks of columns (not periodic);
// - a Jacobi solve split in two, each sweep computing the inner rows while row_halo_exchange
//   moves the halo rows, against the whole plate swept on one GPU;
// - volume_halo_exchange on two blocks of a volume split along z (whole planes, as they are), y
//   and x (packed), not periodic; and its split phase, periodic, along x;
// - migrate: each rank sends the other a known subset of its particles, and ends with exactly the
//   particles bound for it (by id), every column intact, the counts matching and the total kept;
//   and three migrations in a row at the edges: nothing moves, a rank sends all it has, a rank
//   that holds nothing receives.
// Skipped with fewer than 2 GPUs (or, for ranks that share one, with none).
//
// Three ways to run it:
// - as it is (ctest nccl.two_processes): no rank in the environment, so each test case is the
//   launcher: it starts this executable twice, one rank each, selecting only itself, and passes
//   when both children pass (their output is printed when one does not);
// - under an MPI launcher (ctest nccl.two_processes.mpirun, or mpirun -np 2 by hand): every case
//   runs as the rank mpirun's environment names. No MPI header or library is used: the rank comes
//   from the environment, and the NCCL id from rank 0 through a file;
// - with both processes on one GPU (ctest nccl.two_processes.one_gpu: COALESCE_NCCL_SHARE_GPU=1):
//   each rank takes a host id of its own (NCCL_HOSTID), as if the two were two machines, so NCCL
//   accepts two ranks on one device and carries their messages over its socket transport through
//   the loopback interface. That checks what goes where between two processes on a machine with
//   one GPU; it says nothing of speed.
#include <coalesce/migration.hpp>
#include <coalesce/nccl.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "nccl_ranks.hpp"
#include "volume_blocks.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace ct = coalesce::testing;

namespace {

constexpr int ranks = coalesce_test::two_ranks;

// --- which rank this process is ------------------------------------------------------------------

// This process's place among the ranks: its rank of `size`, and among the processes on its host
// (which GPU is its own).
struct rank_environment {
  int rank = 0;
  int size = 0;
  int local_rank = 0;
  int local_size = 0;
};

std::optional<int> int_from_environment(const char* name) {
  const char* text = name ? std::getenv(name) : nullptr;
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0 || value > INT_MAX)
    throw std::runtime_error(std::string(name) + "=" + text + " is not a rank or a count of ranks");
  return static_cast<int>(value);
}

// The rank a launcher gave this process, if one did: our own launcher (run_as_two_processes),
// Open MPI's mpirun, or MPICH's (and Intel MPI's) hydra, which set these before main. The first
// that names a rank wins. A rank of a job of one is no rank here: that process is alone, and
// launches the two itself. (PMIx alone sets PMIX_RANK without a size; Open MPI, which runs on
// PMIx, sets OMPI_COMM_WORLD_* as well.)
std::optional<rank_environment> rank_from_environment() {
  struct launcher_variables {
    const char *rank, *size, *local_rank, *local_size;
  };
  static constexpr launcher_variables launchers[] = {
      {"COALESCE_NCCL_RANK", "COALESCE_NCCL_SIZE", nullptr, nullptr},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
  };
  for (const auto& launcher : launchers) {
    const auto rank = int_from_environment(launcher.rank);
    if (!rank) continue;
    const auto size = int_from_environment(launcher.size);
    if (!size)
      throw std::runtime_error(std::string(launcher.rank) + " is set but " + launcher.size +
                               " is not: how many ranks are there?");
    if (*size == 1) return std::nullopt;
    rank_environment env;
    env.rank = *rank;
    env.size = *size;
    // Without the launcher's local numbering, every rank is taken to be on this host.
    env.local_rank = int_from_environment(launcher.local_rank).value_or(*rank);
    env.local_size = int_from_environment(launcher.local_size).value_or(*size);
    return env;
  }
  return std::nullopt;
}

// Whether the two ranks share one GPU, each posing as a host of its own (see the top of the file).
bool ranks_share_one_gpu() {
  const char* share = std::getenv("COALESCE_NCCL_SHARE_GPU");
  return share != nullptr && std::strcmp(share, "1") == 0;
}

// In a rank process, why it cannot have a GPU of its own, if it cannot. Every rank on a host sees
// the same count, so they all skip or none does. Each rank must see all of its host's GPUs (rank
// r takes local GPU r): a launcher that shows each rank one GPU (CUDA_VISIBLE_DEVICES per rank)
// looks, from inside a rank, like a host with too few, and the test skips.
std::optional<std::string> own_gpu_unavailable_reason(const rank_environment& env) {
  if (auto reason = ct::gpu_unavailable_reason()) return reason;
  int count = 0;
  COALESCE_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < env.local_size && !ranks_share_one_gpu())
    return std::to_string(env.local_size) + " processes on this host need a GPU each, found " + std::to_string(count) +
           " (COALESCE_NCCL_SHARE_GPU=1 runs them on one)";
  return std::nullopt;
}

// --- the NCCL id, from rank 0 to the others through a file ----------------------------------------

// Rank 0's ncclGetUniqueId must reach every other rank before ncclCommInitRank, and without MPI
// there is no message to carry it: it goes through a file on this host's file system. The path is
// COALESCE_NCCL_ID_FILE (our launcher makes a fresh directory for it; the mpirun test names one
// in the build directory) or, under a PMIx launcher (Open MPI's), one in the temporary directory
// named after the job, which no earlier run shares. Each test case adds its name, so the cases of
// one run never read each other's id.
std::string id_file_for(const std::string& name) {
  if (const char* file = std::getenv("COALESCE_NCCL_ID_FILE"); file != nullptr && *file != '\0')
    return std::string(file) + "." + name;
  if (const char* job = std::getenv("PMIX_NAMESPACE"); job != nullptr && *job != '\0') {
    std::string safe = job;  // Open MPI 5's: prterun-<host>-<pid>@1
    const auto unsafe = [](char c) { return !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'); };
    std::replace_if(safe.begin(), safe.end(), unsafe, '_');
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/coalesce-nccl-id-" + safe + "." + name;
  }
  throw std::runtime_error(
      "no file to pass the NCCL id through: set COALESCE_NCCL_ID_FILE to a path every rank can read "
      "(mpirun -x COALESCE_NCCL_ID_FILE=/tmp/nccl-id for Open MPI, -genv for MPICH)");
}

// Written whole under another name and renamed: a reader sees no file or the whole id.
void publish_id(const std::string& path, const ncclUniqueId& id) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(id.internal, sizeof id.internal);
    out.flush();
    if (!out) throw std::runtime_error("rank 0: cannot write the NCCL id to " + partial);
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0)
    throw std::runtime_error("rank 0: renaming " + partial + " to " + path + ": " + std::strerror(errno));
}

// Generous: under compute-sanitizer, rank 0's start-up alone takes tens of seconds.
constexpr auto id_wait_limit = std::chrono::seconds(120);

ncclUniqueId await_id(const std::string& path, int rank) {
  const auto deadline = std::chrono::steady_clock::now() + id_wait_limit;
  ncclUniqueId id{};
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path, std::ios::binary);
    if (in.read(id.internal, sizeof id.internal) && in.gcount() == std::streamsize(sizeof id.internal)) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error(
      "rank " + std::to_string(rank) + ": no NCCL id in " + path + " after " + std::to_string(id_wait_limit.count()) +
      " s: rank 0 did not start, failed before writing it, or was given another COALESCE_NCCL_ID_FILE");
}

// For ranks that share one GPU, before this process's first NCCL call: a host id of its own, which
// NCCL takes in place of the machine's (so it sees no two ranks on one device, and joins them by
// its network transport), and, unless one is named already, the loopback interface for the
// sockets between those "hosts" (NCCL leaves it out of its own choice).
void pose_as_a_host_of_its_own(int rank) {
  const std::string host = "coalesce-rank-" + std::to_string(rank);
  if (::setenv("NCCL_HOSTID", host.c_str(), 1) != 0 || ::setenv("NCCL_SOCKET_IFNAME", "lo", 0) != 0)
    throw std::runtime_error(std::string("setenv: ") + std::strerror(errno));
}

// One rank of the two: this process's GPU made current, and its communicator, destroyed at the
// end of the test case. Every rank must make its process_rank in the same test case: the
// constructor returns when all of them have joined.
struct process_rank {
  int rank = 0;
  int size = 0;
  int device = 0;
  ncclComm_t comm{};

  explicit process_rank(const std::string& name) {
    const rank_environment env = rank_from_environment().value();
    rank = env.rank;
    size = env.size;
    if (size != ranks)
      FAIL("these cases split their domain between " << ranks << " processes; this is rank " << rank << " of " << size);
    int count = 0;
    COALESCE_CUDA_CHECK(cudaGetDeviceCount(&count));
    device = env.local_rank % count;
    COALESCE_CUDA_CHECK(cudaSetDevice(device));
    if (ranks_share_one_gpu()) pose_as_a_host_of_its_own(rank);
    const std::string path = id_file_for(name);
    ncclUniqueId id{};
    if (rank == 0) {
      coalesce::throw_on_nccl_error(ncclGetUniqueId(&id), "ncclGetUniqueId");
      publish_id(path, id);
    } else {
      id = await_id(path, rank);
    }
    const ncclResult_t joined = ncclCommInitRank(&comm, size, id, rank);
    // Every rank has read the id once ncclCommInitRank returns on rank 0 (it waits for all of
    // them), so the file goes: a later run must not find a stale id there. Whatever the result.
    if (rank == 0) std::remove(path.c_str());
    coalesce::throw_on_nccl_error(joined, "ncclCommInitRank");
  }
  ~process_rank() {
    // A failed REQUIRE or an exception may leave the other rank's messages unanswered: abort does
    // not wait for them, as destroy would.
    if (std::uncaught_exceptions() > 0) (void)ncclCommAbort(comm);
    else (void)ncclCommDestroy(comm);
  }
  process_rank(const process_rank&) = delete;
  process_rank& operator=(const process_rank&) = delete;
};

// A CUDA stream of the current device, destroyed at the end of the scope.
struct owned_stream {
  cudaStream_t stream{};
  owned_stream() { COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~owned_stream() { (void)cudaStreamDestroy(stream); }
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;
};

// --- the launcher -------------------------------------------------------------------------------

// How long the two ranks of one case may take together, generous for compute-sanitizer. A rank
// that waits for a message its peer will never send waits forever: this is what ends it.
constexpr auto case_time_limit = std::chrono::minutes(5);

// This executable's path, to start it again (main's argv[0] is not at hand, and may be a bare
// name that was looked up in PATH).
std::string this_executable() {
  char self[4096] = {};
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) throw std::runtime_error(std::string("readlink /proc/self/exe: ") + std::strerror(errno));
  return std::string(self, static_cast<std::size_t>(length));
}

// This process's environment with the child's rank variables in place of any already there.
// NCCL_DEBUG=WARN unless set: an NCCL failure in a child then says why in the output printed.
std::vector<std::string> child_environment(int rank, const std::string& id_file) {
  std::vector<std::string> env;
  bool nccl_debug = false;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string variable = *entry;
    const std::string name = variable.substr(0, variable.find('='));
    if (name == "COALESCE_NCCL_RANK" || name == "COALESCE_NCCL_SIZE" || name == "COALESCE_NCCL_ID_FILE") continue;
    nccl_debug = nccl_debug || name == "NCCL_DEBUG";
    env.push_back(variable);
  }
  env.push_back("COALESCE_NCCL_RANK=" + std::to_string(rank));
  env.push_back("COALESCE_NCCL_SIZE=" + std::to_string(ranks));
  env.push_back("COALESCE_NCCL_ID_FILE=" + id_file);
  if (!nccl_debug) env.push_back("NCCL_DEBUG=WARN");
  return env;
}

// Starts `executable filter` with `env`, its output (both streams) into `log`; returns its pid.
pid_t spawn(const std::string& executable, const std::string& filter, std::vector<std::string> env,
            const std::string& log) {
  std::string program = executable, selection = filter;
  std::vector<char*> argv{program.data(), selection.data(), nullptr};
  std::vector<char*> envp;
  for (auto& variable : env) envp.push_back(variable.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error("posix_spawn " + program + ": " + std::strerror(error));
  return pid;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// How a child ended, in words.
std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

// The launcher's side of a test case: runs the case `[name]` as two processes of this
// executable, rank 0 and rank 1, and checks that both pass. When one fails, or time runs out, the
// other is killed: it may be waiting for messages that will not come.
void run_as_two_processes(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string directory = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/coalesce-nccl-XXXXXX";
  if (::mkdtemp(directory.data()) == nullptr) FAIL("mkdtemp " << directory << ": " << std::strerror(errno));
  struct remove_directory {
    std::filesystem::path path;
    ~remove_directory() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } cleanup{directory};

  const std::string executable = this_executable();
  std::array<pid_t, ranks> pid{};
  std::array<std::filesystem::path, ranks> log;
  std::array<int, ranks> status{};
  std::array<std::string, ranks> how;
  std::array<bool, ranks> done{};
  const auto kill_the_running = [&](const std::string& why) {
    for (int r = 0; r < ranks; ++r) {
      if (done[r] || pid[r] <= 0) continue;
      ::kill(pid[r], SIGKILL);
      ::waitpid(pid[r], &status[r], 0);
      done[r] = true;
      how[r] = "was killed " + why;
    }
  };
  for (int r = 0; r < ranks; ++r) {
    log[r] = cleanup.path / ("rank" + std::to_string(r) + ".log");
    try {
      pid[r] = spawn(executable, "[" + name + "]", child_environment(r, (cleanup.path / "nccl-id").string()),
                     log[r].string());
    } catch (const std::exception& e) {
      kill_the_running("(the other rank could not be started)");
      FAIL(e.what());
    }
  }

  const auto deadline = std::chrono::steady_clock::now() + case_time_limit;
  while (!(done[0] && done[1])) {
    for (int r = 0; r < ranks; ++r) {
      if (done[r]) continue;
      const pid_t waited = ::waitpid(pid[r], &status[r], WNOHANG);
      if (waited == pid[r] || (waited < 0 && errno != EINTR)) {
        done[r] = true;
        if (waited == pid[r]) {
          how[r] = describe(status[r]);
        } else {
          how[r] = std::string("could not be waited for: ") + std::strerror(errno);
          status[r] = -1;  // neither exited nor signalled: counts as failed
        }
      }
    }
    const auto failed = [&](int r) { return done[r] && !(WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0); };
    if (failed(0) || failed(1)) kill_the_running("after the other rank failed");
    else if (std::chrono::steady_clock::now() > deadline)
      kill_the_running("after " +
                       std::to_string(std::chrono::duration_cast<std::chrono::seconds>(case_time_limit).count()) +
                       " s, still running");
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  for (int r = 0; r < ranks; ++r) {
    const std::string output = read_file(log[r]);
    const bool exited_0 = WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0;
    // Catch2 2.x exits 0 when its filter matches nothing: the child must have run its case, and
    // asserted something.
    const std::size_t summary = output.find("All tests passed");
    INFO("rank " << r << " " << how[r] << (exited_0 && summary == std::string::npos ? " but passed no test case" : "")
                 << "; it printed:\n"
                 << output);
    CHECK((exited_0 && summary != std::string::npos));
    // Its count of assertions, in other words than Catch's summary line: scripts/device-check.sh
    // reads the first such line as this executable's own.
    const std::size_t counts = output.find('(', summary);
    if (exited_0 && summary != std::string::npos && counts != std::string::npos)
      std::printf("rank %d passed %s\n", r, output.substr(counts, output.find('\n', counts) - counts).c_str());
  }
}

}  // namespace

// Opens each test case: in a rank process, skips unless this process has a GPU of its own (or
// the ranks share one) and goes on as that rank; otherwise (no rank in the environment) it is the
// launcher, which needs two GPUs (or one to share), runs the case as two processes and ends it.
#define COALESCE_RANK_OR_LAUNCH(name)                                                             \
  do {                                                                                            \
    const auto coalesce_rank_environment_ = rank_from_environment();                              \
    if (!coalesce_rank_environment_) {                                                            \
      if (!ranks_share_one_gpu()) COALESCE_REQUIRE_TWO_GPUS();                                    \
      if (auto coalesce_no_gpu_ = ct::gpu_unavailable_reason()) COALESCE_SKIP(*coalesce_no_gpu_); \
      run_as_two_processes(name);                                                                 \
      return;                                                                                     \
    }                                                                                             \
    if (auto coalesce_no_gpu_ = own_gpu_unavailable_reason(*coalesce_rank_environment_))          \
      COALESCE_SKIP(*coalesce_no_gpu_);                                                           \
  } while (0)

// --- halos -----------------------------------------------------------------------------------------

namespace {

// The value of global row g, column c: each element its own for fewer than 4096 columns (and
// exact in a float below 4096 rows), so a misplaced row or column shows.
float value_at(std::size_t g, std::size_t c) { return float(g * 4096 + c); }

// Every element of `got` (rows x cols, dense) against expected(i, c); one assertion, naming the
// first element that differs (the launcher also checks that its children asserted something).
template <class Expected>
void check_elements(const std::vector<float>& got, std::size_t rows, std::size_t cols, const Expected& expected,
                    int rank) {
  std::size_t wrong = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < cols; ++c)
      if (got[i * cols + c] != expected(i, c)) {
        if (wrong == 0)
          first << "row " << i << ", column " << c << ": " << got[i * cols + c] << ", expected " << expected(i, c);
        ++wrong;
      }
  INFO("rank " << rank << ": " << wrong << " element(s) wrong; the first at " << first.str());
  CHECK(wrong == 0);
}

// Rank r's block of `own` rows (global rows from r * own) with `halo` rows above and below, -1.
coalesce::pitched_matrix<float> row_block(int r, std::size_t own, std::size_t halo, std::size_t cols) {
  const std::size_t rows = own + 2 * halo;
  std::vector<float> host(rows * cols, -1.0f);
  for (std::size_t i = 0; i < own; ++i)
    for (std::size_t c = 0; c < cols; ++c) host[(halo + i) * cols + c] = value_at(std::size_t(r) * own + i, c);
  return coalesce::pitched_matrix<float>(host, rows, cols);
}

}  // namespace

TEST_CASE(
    "exchange_row_halos between two processes: each inner halo receives the other block's edge rows, the outer ones "
    "stay as they were",
    "[rows]") {
  COALESCE_RANK_OR_LAUNCH("rows");
  process_rank self("rows");
  const int r = self.rank;
  const std::size_t own = 300, halo = 2, cols = 1001, rows = own + 2 * halo;
  auto block = row_block(r, own, halo, cols);
  owned_stream stream;
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(block.stream()));  // the exchange's stream sees the rows it sends
  // Rank 0 holds the top block, rank 1 the bottom one; the domain is not periodic.
  const auto neighbours = r == 0 ? coalesce::row_neighbours{-1, 1} : coalesce::row_neighbours{0, -1};
  coalesce::exchange_row_halos(block.view(), halo, neighbours, self.comm, stream.stream);
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream.stream));
  const auto expected = [&](std::size_t i, std::size_t c) {
    if (i >= halo && i < halo + own) return value_at(std::size_t(r) * own + i - halo, c);
    if (r == 0 && i >= halo + own) return value_at(own + (i - halo - own), c);  // rank 1's first rows
    if (r == 1 && i < halo) return value_at(own - halo + i, c);                 // rank 0's last rows
    return -1.0f;                                                               // the outer halos
  };
  check_elements(block.to_vector(), rows, cols, expected, r);
}

TEST_CASE(
    "row_halo_exchange between two processes, periodic: started on an exchange stream, finished on the work stream, "
    "which then reads the halos",
    "[rows-split-phase]") {
  COALESCE_RANK_OR_LAUNCH("rows-split-phase");
  process_rank self("rows-split-phase");
  const int r = self.rank, other = 1 - r;
  const std::size_t own = 64, halo = 1, cols = 256, rows = own + 2 * halo;
  auto block = row_block(r, own, halo, cols);
  owned_stream exchange, work;
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(block.stream()));  // the exchange stream sees the rows it sends
  // Periodic: the other rank is the neighbour above and below.
  coalesce::row_halo_exchange<float> halos(block.view(), halo, coalesce::row_neighbours{other, other}, self.comm);
  halos.start(exchange.stream);
  halos.finish(work.stream);
  std::vector<float> got(rows * cols);
  // Read back on the work stream: only finish() orders it after the exchange.
  COALESCE_CUDA_CHECK(cudaMemcpy2DAsync(got.data(), cols * sizeof(float), block.view().data(),
                                        block.view().pitch_bytes(), cols * sizeof(float), rows, cudaMemcpyDeviceToHost,
                                        work.stream));
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(work.stream));
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(exchange.stream));  // before the event and streams go
  const auto expected = [&](std::size_t i, std::size_t c) {
    if (i < halo) return value_at(std::size_t(other) * own + own - halo + i, c);        // the other's last rows
    if (i >= halo + own) return value_at(std::size_t(other) * own + (i - halo - own), c);  // its first rows
    return value_at(std::size_t(r) * own + i - halo, c);
  };
  check_elements(got, rows, cols, expected, r);
}

TEST_CASE(
    "column_halo_exchange between two processes: each inner halo receives the other block's edge columns, the outer "
    "ones stay as they were",
    "[columns]") {
  COALESCE_RANK_OR_LAUNCH("columns");
  process_rank self("columns");
  const int r = self.rank;
  const std::size_t rows = 90, own = 100, halo = 3, cols = own + 2 * halo;
  std::vector<float> host(rows * cols, -1.0f);  // halos: -1
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < own; ++c) host[i * cols + halo + c] = value_at(i, std::size_t(r) * own + c);
  coalesce::pitched_matrix<float> block(host, rows, cols);
  // Rank 0 holds the left block, rank 1 the right one; not periodic.
  const auto neighbours = r == 0 ? coalesce::column_neighbours{-1, 1} : coalesce::column_neighbours{0, -1};
  coalesce::column_halo_exchange<float> halos(block.view(), halo, neighbours, self.comm, block.stream());
  halos.exchange();
  const auto expected = [&](std::size_t i, std::size_t c) {
    if (c >= halo && c < halo + own) return value_at(i, std::size_t(r) * own + c - halo);
    if (r == 0 && c >= halo + own) return value_at(i, own + c - halo - own);  // rank 1's first columns
    if (r == 1 && c < halo) return value_at(i, own - halo + c);                // rank 0's last columns
    return -1.0f;                                                              // the outer halos
  };
  check_elements(block.to_vector(), rows, cols, expected, r);  // waits for the block's stream
}

// --- a Jacobi solve with the exchange overlapped -----------------------------------------------------

namespace {

struct jacobi {
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return 0.25f * (n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1));
  }
};

// The plate's starting temperatures: a hot top edge, and values that differ from row to row and
// column to column inside (so a halo row from the wrong place, or late, changes the result).
float plate_at(std::size_t g, std::size_t c) { return g == 0 ? 100.0f : float((g * 7 + c * 13) % 101); }

}  // namespace

TEST_CASE("a Jacobi solve split between two processes, each sweep computing the inner rows while the halo rows travel, "
          "equals the same sweeps of the whole plate on one GPU",
          "[jacobi-overlap]") {
  COALESCE_RANK_OR_LAUNCH("jacobi-overlap");
  process_rank self("jacobi-overlap");
  const int r = self.rank;
  const std::size_t own = 61, cols = 203,
                    rows = 2 * own + 2;  // the plate: two blocks of own rows and its two edge rows
  const int sweeps = 40;
  std::vector<float> plate(rows * cols);
  for (std::size_t g = 0; g < rows; ++g)
    for (std::size_t c = 0; c < cols; ++c) plate[g * cols + c] = plate_at(g, c);

  // The reference: the whole plate, swept on this process's GPU.
  coalesce::pitched_matrix<float> whole(plate, rows, cols), whole_next(plate, rows, cols);
  for (int s = 0; s < sweeps; ++s) {
    coalesce::stencil<1>(coalesce::interior, whole, whole_next, jacobi{});
    whole.swap(whole_next);
  }
  const std::vector<float> reference = whole.to_vector();

  // Rank r's block: global rows r * own .. r * own + own + 1; its halo row on the split holds the
  // other block's edge row after an exchange, its halo on the plate's edge is that edge.
  const std::vector<float> start(plate.begin() + std::ptrdiff_t(std::size_t(r) * own * cols),
                                 plate.begin() + std::ptrdiff_t((std::size_t(r) * own + own + 2) * cols));
  std::array<coalesce::pitched_matrix<float>, 2> block{coalesce::pitched_matrix<float>(start, own + 2, cols),
                                                       coalesce::pitched_matrix<float>(start, own + 2, cols)};
  owned_stream work, exchange_stream;
  cudaEvent_t swept{};
  COALESCE_CUDA_CHECK(cudaEventCreateWithFlags(&swept, cudaEventDisableTiming));
  for (auto& b : block) COALESCE_CUDA_CHECK(cudaStreamSynchronize(b.stream()));
  const auto neighbours = r == 0 ? coalesce::row_neighbours{-1, 1} : coalesce::row_neighbours{0, -1};
  // One exchange per buffer: each sweep reads one and writes the other.
  std::array<coalesce::row_halo_exchange<float>, 2> halos{
      coalesce::row_halo_exchange<float>(block[0].view(), 1, neighbours, self.comm),
      coalesce::row_halo_exchange<float>(block[1].view(), 1, neighbours, self.comm)};
  for (int s = 0; s < sweeps; ++s) {
    const auto from = block[s % 2].view(), to = block[1 - s % 2].view();
    // The rows sent were written by the last sweep, on the work stream.
    COALESCE_CUDA_CHECK(cudaEventRecord(swept, work.stream));
    COALESCE_CUDA_CHECK(cudaStreamWaitEvent(exchange_stream.stream, swept, 0));
    halos[s % 2].start(exchange_stream.stream);
    // Rows 2 .. own - 1 need no halo: computed while the halo rows travel.
    coalesce::stencil<1>(coalesce::interior, from.block(1, 0, own, cols), to.block(1, 0, own, cols), jacobi{},
                         work.stream);
    halos[s % 2].finish(work.stream);
    coalesce::stencil<1>(coalesce::interior, from.block(0, 0, 3, cols), to.block(0, 0, 3, cols), jacobi{}, work.stream);
    coalesce::stencil<1>(coalesce::interior, from.block(own - 1, 0, 3, cols), to.block(own - 1, 0, 3, cols), jacobi{},
                         work.stream);
  }
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(work.stream));
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(exchange_stream.stream));
  COALESCE_CUDA_CHECK(cudaEventDestroy(swept));
  const std::vector<float> got = block[sweeps % 2].to_vector();
  // Own rows against the reference's; the halo rows are last sweep's inputs, not compared.
  check_elements(
      got, own + 2, cols,
      [&](std::size_t i, std::size_t c) {
        if (i == 0 || i == own + 1) return got[i * cols + c];
        return reference[(std::size_t(r) * own + i) * cols + c];
      },
      r);
}

// --- volumes -------------------------------------------------------------------------------------

namespace {

using coalesce::volume_axis;
using coalesce_test::volume_shape;

// Along z whole planes go as they are; along y (rows of every plane) and x (columns) they are
// packed. Odd extents: no face is a multiple of a warp or a tile.
const volume_shape split_volumes[] = {volume_shape(volume_axis::z, 12, 2, 0, 40, 70),
                                      volume_shape(volume_axis::y, 21, 2, 7, 0, 45),
                                      volume_shape(volume_axis::x, 50, 3, 9, 40, 0)};

}  // namespace

TEST_CASE(
    "volume_halo_exchange between two processes, split along z (as it is), y and x (packed): each inner halo receives "
    "the other block's edge layers, the outer ones stay as they were",
    "[volumes]") {
  COALESCE_RANK_OR_LAUNCH("volumes");
  process_rank self("volumes");
  const int r = self.rank;
  for (const auto& s : split_volumes) {
    coalesce::pitched_volume<float> block(coalesce_test::volume_values(s, std::size_t(r) * s.own), s.extents[0],
                                          s.extents[1], s.extents[2]);
    // Rank 0 holds the first block along the axis, rank 1 the second; not periodic.
    const auto neighbours = r == 0 ? coalesce::axis_neighbours{-1, 1} : coalesce::axis_neighbours{0, -1};
    {
      coalesce::volume_halo_exchange<float> exchange(block.view(), s.axis, s.halo, neighbours, self.comm,
                                                     block.stream());
      CHECK(exchange.packs() == (s.axis != volume_axis::z));
      exchange.exchange();
    }
    coalesce_test::check_volume(
        block.to_vector(), s,
        [&](std::array<std::size_t, 3> p) { return coalesce_test::after_exchange_of_two(s, r, p); },
        "rank " + std::to_string(r));
  }
}

TEST_CASE(
    "volume_halo_exchange between two processes, periodic, split along x: started on its own stream, finished on the "
    "work stream, which then reads the halos",
    "[volumes-split-phase]") {
  COALESCE_RANK_OR_LAUNCH("volumes-split-phase");
  process_rank self("volumes-split-phase");
  const int r = self.rank, other = 1 - r;
  const volume_shape s(volume_axis::x, 40, 2, 6, 17, 0);
  coalesce::pitched_volume<float> block(coalesce_test::volume_values(s, std::size_t(r) * s.own), s.extents[0],
                                        s.extents[1], s.extents[2]);
  owned_stream exchange_stream, work;
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(block.stream()));  // the exchange stream sees the layers it sends
  std::vector<float> got(s.size());
  {
    // Periodic: the other rank is the neighbour before and after.
    coalesce::volume_halo_exchange<float> exchange(
        block.view(), s.axis, s.halo, coalesce::axis_neighbours{other, other}, self.comm, exchange_stream.stream);
    exchange.start();
    exchange.finish(work.stream);
    // Read back on the work stream: only finish() orders it after the exchange.
    const auto v = block.view();
    COALESCE_CUDA_CHECK(cudaMemcpy2DAsync(got.data(), v.width() * sizeof(float), v.data(), v.pitch_bytes(),
                                          v.width() * sizeof(float), v.depth() * v.height(), cudaMemcpyDeviceToHost,
                                          work.stream));
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(work.stream));
  }  // the buffers go back to the pool on the exchange stream
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(exchange_stream.stream));
  coalesce_test::check_volume(
      got, s,
      [&](std::array<std::size_t, 3> p) {
    // The halo before the own columns holds the other block's last columns, the halo after them its first.
        const std::size_t x = p[2];
        std::size_t global = std::size_t(r) * s.own + x - s.halo;                              // own
        if (x < s.halo) global = std::size_t(other) * s.own + s.own - s.halo + x;              // before
        else if (x >= s.halo + s.own) global = std::size_t(other) * s.own + x - s.halo - s.own;  // after
        return coalesce_test::value_at(p[0], p[1], global);
      },
      "rank " + std::to_string(r));
}

// --- migration -------------------------------------------------------------------------------------

// A particle with an id and columns of 8, 4, 8 and 2 bytes, each a function of the id, so that a
// particle torn between columns (one column sent, another not, or landing at another index)
// shows.
struct Tracer {
  std::uint64_t id;
  float x;
  double weight;
  std::int16_t kind;
};
COALESCE_FIELDS(Tracer, id, x, weight, kind);

namespace {

Tracer tracer(std::uint64_t id) {
  return {id, float(id) * 0.5f, double(id) * 1.5 + 0.25, static_cast<std::int16_t>(int(id % 977) - 400)};
}
bool intact(const Tracer& t) {
  const Tracer expected = tracer(t.id);
  return t.x == expected.x && t.weight == expected.weight && t.kind == expected.kind;
}

// Rank 0 starts with ids [0, 100003) and sends the multiples of 3 to rank 1; rank 1 starts with
// ids [100003, 177780) and sends the multiples of 5 to rank 0. Odd sizes: no count is a multiple
// of a block or a chunk.
constexpr std::array<std::uint64_t, ranks> first_id{0, 100003}, particles_of{100003, 77777}, sends_multiples_of{3, 5};

struct bound_for {
  int self;
  std::uint64_t multiple_of;
  template <class P>
  __host__ __device__ int operator()(const P& p) const {
    const std::uint64_t id = p.id;
    return id % multiple_of == 0 ? 1 - self : self;
  }
};

// The ids rank r holds after the migration, sorted.
std::vector<std::uint64_t> ids_after(int r) {
  std::vector<std::uint64_t> ids;
  for (int from = 0; from < ranks; ++from)
    for (std::uint64_t id = first_id[from]; id < first_id[from] + particles_of[from]; ++id)
      if (bound_for{from, sends_multiples_of[from]}(tracer(id)) == r) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

TEST_CASE(
    "migrate between two processes: each ends with exactly the particles bound for it, every column intact, and the "
    "total kept",
    "[migrate]") {
  COALESCE_RANK_OR_LAUNCH("migrate");
  process_rank self("migrate");
  const int r = self.rank, other = 1 - r;
  std::vector<Tracer> start;
  for (std::uint64_t id = first_id[r]; id < first_id[r] + particles_of[r]; ++id) start.push_back(tracer(id));
  coalesce::soa_vector<Tracer> v(start);

  const auto moved = coalesce::migrate(v, bound_for{r, sends_multiples_of[r]}, self.comm);
  std::vector<Tracer> got = v.to_vector();  // waits for the vector's stream, so for the messages

  // Each rank's departed, arrived and held, gathered over NCCL before anything is checked (a
  // failed REQUIRE would leave the other rank waiting in the gather): what one rank sent the
  // other received, and no particle was made or lost.
  const std::array<unsigned long long, 3> mine{moved.departed, moved.arrived, got.size()};
  std::array<unsigned long long, 3 * ranks> everyone{};
  ct::device_buffer<unsigned long long> mine_on_device(mine.size()), everyone_on_device(everyone.size());
  COALESCE_CUDA_CHECK(
      cudaMemcpyAsync(mine_on_device.data(), mine.data(), sizeof mine, cudaMemcpyHostToDevice, v.stream()));
  coalesce::throw_on_nccl_error(ncclAllGather(mine_on_device.data(), everyone_on_device.data(), mine.size(), ncclUint64,
                                              self.comm, v.stream()),
                                "ncclAllGather");
  COALESCE_CUDA_CHECK(
      cudaMemcpyAsync(everyone.data(), everyone_on_device.data(), sizeof everyone, cudaMemcpyDeviceToHost, v.stream()));
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(v.stream()));

  const auto multiples = [](int rank) {
    const std::uint64_t m = sends_multiples_of[rank], first = first_id[rank], last = first + particles_of[rank] - 1;
    return std::size_t(last / m - (first + m - 1) / m + 1);
  };
  CHECK(moved.departed == multiples(r));
  CHECK(moved.arrived == multiples(other));
  CHECK(everyone[0 * 3 + 1] == everyone[1 * 3 + 0]);  // rank 0 received what rank 1 sent
  CHECK(everyone[1 * 3 + 1] == everyone[0 * 3 + 0]);  // and the other way
  CHECK(everyone[0 * 3 + 2] + everyone[1 * 3 + 2] == particles_of[0] + particles_of[1]);

  std::sort(got.begin(), got.end(), [](const Tracer& a, const Tracer& b) { return a.id < b.id; });
  std::vector<std::uint64_t> ids;
  for (const Tracer& t : got) ids.push_back(t.id);
  const auto expected = ids_after(r);
  REQUIRE(ids.size() == expected.size());
  {  // sorted, as multisets: a particle lost, duplicated or sent to the wrong rank shows
    const auto wrong = std::mismatch(ids.begin(), ids.end(), expected.begin());
    const bool every_id_expected = wrong.first == ids.end();
    std::ostringstream first;
    if (!every_id_expected)
      first << "rank " << r << ", sorted position " << (wrong.first - ids.begin()) << ": id " << *wrong.first
            << ", expected " << *wrong.second;
    INFO(first.str());
    CHECK(every_id_expected);
  }
  {
    const auto torn = std::find_if(got.begin(), got.end(), [](const Tracer& t) { return !intact(t); });
    const bool every_particle_intact = torn == got.end();
    std::ostringstream first;
    if (!every_particle_intact)
      first << "rank " << r << ": particle " << torn->id << " has x " << torn->x << ", weight " << torn->weight
            << ", kind " << torn->kind << ", not its own";
    INFO(first.str());
    CHECK(every_particle_intact);
  }
}

namespace {

// Where each of three migrations in a row sends a particle: nowhere (every particle stays), then
// everything to rank 1, then the odd ids to rank 0.
struct stage_destination {
  int self;
  int stage;
  template <class P>
  __host__ __device__ int operator()(const P& p) const {
    const std::uint64_t id = p.id;
    return stage == 0 ? self : stage == 1 ? 1 : int(id % 2 == 1 ? 0 : 1);
  }
};

}  // namespace

TEST_CASE("migrate between two processes at the edges: nothing moves, a rank empties, an empty rank receives",
          "[migrate-edges]") {
  COALESCE_RANK_OR_LAUNCH("migrate-edges");
  process_rank self("migrate-edges");
  const int r = self.rank;
  // Rank 0 starts with ids [0, 5001), rank 1 with none.
  const std::uint64_t n = 5001;
  std::vector<Tracer> start;
  if (r == 0)
    for (std::uint64_t id = 0; id < n; ++id) start.push_back(tracer(id));
  coalesce::soa_vector<Tracer> v(start);

  // The ids this rank holds after each stage, and what it sent and received there.
  struct stage_result {
    std::size_t departed, arrived, held;
  };
  const std::array<std::array<stage_result, 3>, ranks> expected{{
      {{{0, 0, n}, {n, 0, 0}, {0, n / 2, n / 2}}},              // rank 0: keeps all, sends all, gets the odd ids
      {{{0, 0, 0}, {0, n, n}, {n / 2, 0, n - n / 2}}},          // rank 1: empty, gets all, sends the odd ids
  }};
  for (int stage = 0; stage < 3; ++stage) {
    const auto moved = coalesce::migrate(v, stage_destination{r, stage}, self.comm);
    const std::vector<Tracer> got = v.to_vector();
    const stage_result want = expected[std::size_t(r)][std::size_t(stage)];
    INFO("rank " << r << ", stage " << stage);
    CHECK(moved.departed == want.departed);
    CHECK(moved.arrived == want.arrived);
    CHECK(got.size() == want.held);
    const auto misplaced = std::count_if(got.begin(), got.end(), [&](const Tracer& t) {
      const bool belongs = stage == 0 ? r == 0 : stage == 1 ? r == 1 : int(t.id % 2 == 1 ? 0 : 1) == r;
      return !belongs || !intact(t) || t.id >= n;
    });
    CHECK(misplaced == 0);
  }
  // The last stage's ids, each once.
  std::vector<Tracer> last = v.to_vector();
  std::vector<std::uint64_t> ids;
  for (const Tracer& t : last) ids.push_back(t.id);
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}
