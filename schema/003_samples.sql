-- hreader vault schema, migration 3: Apple Health samples, stored as their reads want them.
--
-- An Apple Health export holds millions of quantity and category samples (`Record` elements).
-- A wide `entries` row per sample (random uuid, raw JSON, codes JSON, text timestamps, six
-- indexes) cost about 970 bytes a sample and wrote to random places. Here a sample is a short
-- row of numbers in a table clustered on its series and time, and what every sample of one
-- series repeats (patient, source, HealthKit type, sourceName, sourceVersion, device, unit, the
-- mapping's entry type, description and codes) is written once, in `sample_series`.
--
-- Lossless: a sample's Record element is rebuilt exactly from its series (the attribute names
-- in document order are the series' `layout`), its row (times with their UTC offsets, value)
-- and `extras` (its MetadataEntry children, when it has any). A Record that does not fit (an
-- attribute the layout cannot name, a date not in the export's own format) stays an entry.
--
-- Readers see samples as entries (docs/formats.md): EntryRepository reads both tables.

CREATE TABLE sample_series (
    id              INTEGER PRIMARY KEY,
    patient_id      INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    source_id       INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    hk_type         TEXT NOT NULL,               -- the Record's `type`
    source_name     TEXT NOT NULL DEFAULT '',    -- attributes as written ('' when absent: see layout)
    source_version  TEXT NOT NULL DEFAULT '',
    device          TEXT NOT NULL DEFAULT '',    -- without the per-sample object address (samples.device_address)
    unit            TEXT NOT NULL DEFAULT '',
    layout          TEXT NOT NULL,               -- the attribute names in document order, comma-separated
    -- What the mapping makes of every sample of the series.
    type            TEXT NOT NULL,
    description     TEXT NOT NULL,
    codes           TEXT NOT NULL,               -- JSON object, as entries.codes
    max_span        INTEGER NOT NULL DEFAULT 0,  -- the longest end - start of its samples (range reads)
    UNIQUE (patient_id, source_id, hk_type, source_name, source_version, device, unit, layout)
);
CREATE INDEX sample_series_source ON sample_series(source_id);

CREATE TABLE samples (
    series_id       INTEGER NOT NULL REFERENCES sample_series(id) ON DELETE CASCADE,
    start_epoch     INTEGER NOT NULL,
    end_epoch       INTEGER NOT NULL,
    value           BLOB NOT NULL,               -- REAL when its text reads back the same, else the text
    id              INTEGER NOT NULL,            -- the entry id readers see (from 2^40 up; entries stay below)
    utc_offset      INTEGER NOT NULL,            -- minutes east of UTC of startDate as written
    end_offset      INTEGER,                     -- of endDate, when not utc_offset
    creation_epoch  INTEGER,                     -- creationDate, when the layout has one
    creation_offset INTEGER,                     -- its offset, when not utc_offset
    device_address  INTEGER,                     -- the 0x… of `<<HKDevice: 0x…>, name:…>`, which differs sample by sample
    extras          TEXT,                        -- MetadataEntry children: key U+001F value, joined by U+001E
    PRIMARY KEY (series_id, start_epoch, end_epoch, value)
) WITHOUT ROWID;
CREATE UNIQUE INDEX samples_id ON samples(id);
