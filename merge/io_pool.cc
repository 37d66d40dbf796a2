#include "merge/io_pool.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace tracemill::merge {
namespace {

using ReadTask = std::packaged_task<absl::StatusOr<size_t>()>;

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  std::future<absl::StatusOr<size_t>> Run(std::function<absl::StatusOr<size_t>()> read) {
    ReadTask task(std::move(read));
    auto result = task.get_future();
    {
      std::lock_guard lk(mu_);
      StartThreads();
      if (!threads_.empty()) {
        queue_.push_back(std::move(task));
        cv_.notify_one();
        return result;
      }
    }
    task();  // no thread could start
    return result;
  }

 private:
  // Under mu_: starts the threads once; as many as the process allows.
  void StartThreads() {
    if (started_) return;
    started_ = true;
    for (int i = 0; i < kIoThreads; ++i) {
      try {
        threads_.emplace_back([this] { Loop(); });
      } catch (const std::system_error&) {
        break;
      }
    }
  }

  void Loop() {
    std::unique_lock lk(mu_);
    for (;;) {
      cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop, nothing queued
      ReadTask task = std::move(queue_.front());
      queue_.pop_front();
      lk.unlock();
      task();
      lk.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ReadTask> queue_;
  std::vector<std::thread> threads_;
  bool started_ = false, stop_ = false;
};

}  // namespace

std::future<absl::StatusOr<size_t>> RunRead(std::function<absl::StatusOr<size_t>()> read) {
  static Pool pool;
  return pool.Run(std::move(read));
}

}  // namespace tracemill::merge
