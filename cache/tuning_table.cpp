#include "cache/tuning_table.h"

#include <utility>

namespace smla {

Status TuningTable::put(const TuningRow& row) {
  SqliteStatement upsert;
  SMLA_TRY(
      db_.prepare("INSERT OR REPLACE INTO tuning (problem_id, batch_bucket, device_name, sm_count, "
                  "driver_version, config_text, measured_us, baseline_us, created) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  &upsert));
  return upsert.bind(1, to_sql(row.problem_id))
      .bind(2, static_cast<int64_t>(row.batch_bucket))
      .bind(3, row.device_name)
      .bind(4, static_cast<int64_t>(row.sm_count))
      .bind(5, static_cast<int64_t>(row.driver_version))
      .bind(6, row.config_text)
      .bind(7, row.measured_us)
      .bind(8, row.baseline_us)
      .bind(9, row.created)
      .run();
}

Status TuningTable::find(uint64_t problem_id, int batch_bucket, const std::string& device_name,
                         int sm_count, int driver_version, std::optional<TuningRow>* row) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare(
      "SELECT config_text, measured_us, baseline_us, created FROM tuning WHERE problem_id = ? "
      "AND batch_bucket = ? AND device_name = ? AND sm_count = ? AND driver_version = ?",
      &select));
  select.bind(1, to_sql(problem_id))
      .bind(2, static_cast<int64_t>(batch_bucket))
      .bind(3, device_name)
      .bind(4, static_cast<int64_t>(sm_count))
      .bind(5, static_cast<int64_t>(driver_version));
  bool has_row = false;
  SMLA_TRY(select.step(&has_row));
  row->reset();
  if (!has_row) return ok_status();
  TuningRow found;
  found.problem_id = problem_id;
  found.batch_bucket = batch_bucket;
  found.device_name = device_name;
  found.sm_count = sm_count;
  found.driver_version = driver_version;
  found.config_text = select.column_text(0);
  found.measured_us = select.column_double(1);
  found.baseline_us = select.column_double(2);
  found.created = select.column_int64(3);
  *row = std::move(found);
  return ok_status();
}

Status TuningTable::count(int64_t* rows) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare("SELECT count(*) FROM tuning", &select));
  bool has_row = false;
  SMLA_TRY(select.step(&has_row));
  *rows = select.column_int64(0);
  return ok_status();
}

Status TuningTable::list(std::vector<TuningRow>* rows) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare(
      "SELECT problem_id, batch_bucket, device_name, sm_count, driver_version, config_text, "
      "measured_us, baseline_us, created FROM tuning",
      &select));
  for (;;) {
    bool has_row = false;
    SMLA_TRY(select.step(&has_row));
    if (!has_row) return ok_status();
    TuningRow row;
    row.problem_id = from_sql(select.column_int64(0));
    row.batch_bucket = static_cast<int>(select.column_int64(1));
    row.device_name = select.column_text(2);
    row.sm_count = static_cast<int>(select.column_int64(3));
    row.driver_version = static_cast<int>(select.column_int64(4));
    row.config_text = select.column_text(5);
    row.measured_us = select.column_double(6);
    row.baseline_us = select.column_double(7);
    row.created = select.column_int64(8);
    rows->push_back(std::move(row));
  }
}

}  // namespace smla
