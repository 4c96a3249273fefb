-- Day totals of vital-sign samples (issue 27): per series and UTC day, how many numeric readings,
-- their sum and extremes, and the sum of their seconds into the day (for the mean time). A chart of a
-- decade (the web view's vitals) reads these instead of ten million samples: 3,650 rows a series.
-- Kept by SampleWriter as an import adds samples (one upsert per series and day, at the end of the
-- import), and removed with their series (a source or a patient removed). Samples are never changed
-- or deleted one by one, so nothing else writes here.
CREATE TABLE sample_days (
    series_id   INTEGER NOT NULL REFERENCES sample_series(id) ON DELETE CASCADE,
    day         INTEGER NOT NULL,   -- floor(start_epoch / 86400)
    count       INTEGER NOT NULL,
    value_sum   REAL NOT NULL,
    second_sum  REAL NOT NULL,      -- sum of (start_epoch - day * 86400)
    min_value   REAL NOT NULL,
    max_value   REAL NOT NULL,
    PRIMARY KEY (series_id, day)
) WITHOUT ROWID;

-- The vaults written before: their vital-sign samples, totalled once.
INSERT INTO sample_days (series_id, day, count, value_sum, second_sum, min_value, max_value)
SELECT series_id, day, count(*), sum(value), sum(start_epoch - day * 86400), min(value), max(value)
FROM (SELECT s.series_id, s.start_epoch, s.value,
             (s.start_epoch - ((s.start_epoch % 86400) + 86400) % 86400) / 86400 AS day
      FROM samples s JOIN sample_series ss ON ss.id = s.series_id
      WHERE ss.type = 'vital_sign' AND typeof(s.value) IN ('integer', 'real'))
GROUP BY series_id, day;
