// BM_MatchCollectives/<ranks>/<instances>/<seq>: the account stage's
// collectives work (analysis/collectives.h) on a made-up job: <ranks>
// inputs, each with <instances> allreduces of one process group, rows
// written per input in arrival order as the taps write them; with <seq> 1
// every op carries Kineto's `Seq` (matched by it), with 0 none (matched by
// time). Timed: MatchCollectives (with its notices) and LastArrivals on a
// tables file in TMPDIR (as `--tables` writes it: same schema, same
// writer); the rows are inserted before the clock starts. Checked after:
// every instance has every rank and each row got its instance.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "analysis/collectives.h"
#include "analysis/schema.h"
#include "formats/sqlite/sqlite_writer.h"

namespace {

using tracemill::analysis::Table;
using tracemill::analysis::TableIndex;

// FillCollectives: ranks x instances rows; rank r arrives r x 3 us late at
// every instance (rank ranks-1 is always last), 2 ms apart, 100 us long.
void FillCollectives(tracemill::formats::SqliteWriter* w, int64_t ranks, int64_t instances, bool seq) {
  for (int64_t r = 0; r < ranks; ++r) {
    tracemill::formats::RowBatch b(TableIndex(Table::kCollectives));
    for (int64_t k = 0; k < instances; ++k) {
      const int64_t arrival = k * 2'000'000 + r * 3'000;
      b.Null();                // instance
      b.Text("0");             // process_group
      if (seq) b.Int(k); else b.Null();
      b.Text("allreduce");
      b.Int(r);                // rank
      b.Int(arrival);
      b.Int(k * 2'000'000 + 100'000 + ranks * 3'000);  // end: together
      b.Null();                // wait_ns
      b.Int(1 << 20);          // bytes
      b.Int(1);                // aligned
      b.Int(r);                // input
      b.Int(ranks);            // group_size
      b.Int(k / 100);          // step
    }
    w->Push(&b);
  }
}

int64_t Count(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

void BM_MatchCollectives(benchmark::State& state) {
  const int64_t ranks = state.range(0), instances = state.range(1);
  const bool seq = state.range(2) != 0;
  const char* t = std::getenv("TMPDIR");
  const std::string path = std::string(t ? t : "/tmp") + "/tracemill-bench-collectives.sqlite";
  for (auto _ : state) {
    state.PauseTiming();
    tracemill::formats::SqliteWriter::Options o;
    o.final_path = path;
    o.tables = tracemill::analysis::TableSpecs();
    o.views = tracemill::analysis::ViewSqls();
    auto w = tracemill::formats::SqliteWriter::Create(std::move(o));
    if (!w.ok()) {
      state.SkipWithError(std::string(w.status().message()).c_str());
      return;
    }
    FillCollectives(w->get(), ranks, instances, seq);
    if (!(*w)->Drain().ok()) {
      state.SkipWithError("insert failed");
      return;
    }
    sqlite3* db = (*w)->db();
    state.ResumeTiming();
    std::vector<std::string> notices;
    absl::Status s = tracemill::analysis::MatchCollectives(db, &notices);
    auto marks = tracemill::analysis::LastArrivals(db);
    state.PauseTiming();
    if (!s.ok() || !notices.empty() || marks.empty() ||
        Count(db, "SELECT count(*) FROM collective_instances") != instances ||
        Count(db, "SELECT count(*) FROM collective_instances WHERE ranks = (SELECT max(rank) + 1 FROM collectives) "
                  "AND last_rank = ranks - 1") != instances ||
        Count(db, "SELECT count(*) FROM collectives WHERE instance IS NULL OR wait_ns IS NULL") != 0) {
      state.SkipWithError(("matching went wrong: " + std::string(s.message())).c_str());
      return;
    }
    (*w)->Abort();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(ranks * instances * static_cast<int64_t>(state.iterations()));
}

BENCHMARK(BM_MatchCollectives)
    ->Args({8, 2'000, 1})
    ->Args({8, 125'000, 1})
    ->Args({8, 125'000, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
