-- hreader vault schema, migration 5: one person, one record (docs/reconciliation.md).
--
-- Merging people. A patient row is one source's record of a person (patients are unique per
-- source and remote id, and imports find them so). `hreader patients merge KEEP OTHER` makes
-- OTHER's rows part of KEEP (merged_into) and moves what OTHER's record holds to KEEP; the rows
-- stay, so later imports from OTHER's sources still find their record, and file what they bring
-- under KEEP. `patients unmerge` undoes a merge from what `patient_merges` recorded.
ALTER TABLE patients ADD COLUMN merged_into INTEGER REFERENCES patients(id) ON DELETE CASCADE;
CREATE INDEX patients_merged_into ON patients(merged_into) WHERE merged_into IS NOT NULL;

CREATE TABLE patient_merges (
    id          INTEGER PRIMARY KEY,
    keep_id     INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    other_id    INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    -- What the merge changed, to be undone exactly (JSON): the rows that were OTHER's person with
    -- what each was merged into before, and the timeline items, sample series and documents moved.
    undo        TEXT NOT NULL CHECK (json_valid(undo)),
    merged_at   TEXT NOT NULL,
    undone_at   TEXT
);
CREATE INDEX patient_merges_keep ON patient_merges(keep_id);

-- Entries gain the record they came with. patient_id is the person an entry is shown under;
-- source_patient_id the patient row of the source's record that stated it (they differ after a
-- merge). A source's entry is one per record (re-imports update it in place, a sync marks what
-- that record lost), so the uniqueness moves from the person to the record: SQLite cannot change
-- a table's constraint, so the table is rebuilt with its ids (the search index keeps pointing at
-- them).
CREATE TABLE entries_v5 (
    id                 INTEGER PRIMARY KEY,
    uuid               TEXT NOT NULL UNIQUE,
    patient_id         INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    source_id          INTEGER NOT NULL REFERENCES sources(id) ON DELETE RESTRICT,
    remote_id          TEXT NOT NULL,
    type               TEXT NOT NULL CHECK (type IN ('condition', 'allergy', 'encounter', 'medication',
                           'procedure', 'result', 'vital_sign', 'immunization', 'activity', 'symptom',
                           'observation')),
    description        TEXT NOT NULL DEFAULT '',
    status             TEXT,
    date_text          TEXT,
    date_epoch         INTEGER,
    start_text         TEXT,
    start_epoch        INTEGER,
    end_text           TEXT,
    end_epoch          INTEGER,
    codes              TEXT NOT NULL DEFAULT '{}',
    value_number       REAL,
    value_text         TEXT,
    unit               TEXT,
    dose               TEXT,
    reaction           TEXT,
    severity           TEXT,
    raw                TEXT,
    comments           TEXT,
    patient_quantity   TEXT,
    patient_dose       TEXT,
    patient_directions TEXT,
    patient_prescriber TEXT,
    user_deleted       INTEGER NOT NULL DEFAULT 0 CHECK (user_deleted IN (0, 1)),
    missing_at_source  TEXT,
    created            TEXT NOT NULL,
    updated            TEXT NOT NULL,
    source_patient_id  INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    UNIQUE (source_patient_id, source_id, remote_id)
);
INSERT INTO entries_v5 (id, uuid, patient_id, source_id, remote_id, type, description, status, date_text, date_epoch,
    start_text, start_epoch, end_text, end_epoch, codes, value_number, value_text, unit, dose, reaction, severity, raw,
    comments, patient_quantity, patient_dose, patient_directions, patient_prescriber, user_deleted, missing_at_source,
    created, updated, source_patient_id)
SELECT id, uuid, patient_id, source_id, remote_id, type, description, status, date_text, date_epoch,
    start_text, start_epoch, end_text, end_epoch, codes, value_number, value_text, unit, dose, reaction, severity, raw,
    comments, patient_quantity, patient_dose, patient_directions, patient_prescriber, user_deleted, missing_at_source,
    created, updated, patient_id
FROM entries;
DROP TABLE entries;   -- its indexes and search triggers go with it
ALTER TABLE entries_v5 RENAME TO entries;

CREATE INDEX entries_patient_date  ON entries(patient_id, date_epoch)  WHERE date_epoch IS NOT NULL;
CREATE INDEX entries_patient_start ON entries(patient_id, start_epoch) WHERE start_epoch IS NOT NULL;
CREATE INDEX entries_patient_end   ON entries(patient_id, end_epoch)   WHERE end_epoch IS NOT NULL;
CREATE INDEX entries_patient_type  ON entries(patient_id, type);
-- Everything the grouping rules read, so regrouping a person reads this index alone and not the
-- rows (each carries its source document; reading and decrypting them cost 5 µs an entry).
CREATE INDEX entries_facts ON entries(patient_id, type, id, source_id, source_patient_id, remote_id, status, missing_at_source,
    date_epoch, start_epoch, end_epoch, value_number, date_text, start_text, value_text, unit, codes)
WHERE user_deleted = 0 AND type IN ('condition', 'allergy', 'medication', 'immunization', 'result', 'vital_sign', 'encounter', 'procedure');

-- An import indexes the entries it adds in one statement at its end (SearchRepository.deferringIndex):
-- while this table holds a row, entries above its id are left to that statement (their later
-- updates and deletes in the same import too). Written and emptied in the import's transaction, so
-- a crash leaves no row behind.
CREATE TABLE search_deferred (
    since  INTEGER NOT NULL
);

CREATE TRIGGER entries_search_insert AFTER INSERT ON entries
WHEN NOT EXISTS (SELECT 1 FROM search_deferred WHERE new.id > since)
BEGIN
    INSERT INTO entries_search (rowid, description, value_text, comments, patient_directions, dose, reaction, codes)
    VALUES (new.id, new.description, new.value_text, new.comments, new.patient_directions, new.dose, new.reaction, new.codes);
END;

CREATE TRIGGER entries_search_delete AFTER DELETE ON entries
WHEN NOT EXISTS (SELECT 1 FROM search_deferred WHERE old.id > since)
BEGIN
    INSERT INTO entries_search (entries_search, rowid, description, value_text, comments, patient_directions, dose, reaction, codes)
    VALUES ('delete', old.id, old.description, old.value_text, old.comments, old.patient_directions, old.dose, old.reaction, old.codes);
END;

CREATE TRIGGER entries_search_update AFTER UPDATE OF description, value_text, comments, patient_directions, dose, reaction, codes ON entries
WHEN NOT EXISTS (SELECT 1 FROM search_deferred WHERE old.id > since)
BEGIN
    INSERT INTO entries_search (entries_search, rowid, description, value_text, comments, patient_directions, dose, reaction, codes)
    VALUES ('delete', old.id, old.description, old.value_text, old.comments, old.patient_directions, old.dose, old.reaction, old.codes);
    INSERT INTO entries_search (rowid, description, value_text, comments, patient_directions, dose, reaction, codes)
    VALUES (new.id, new.description, new.value_text, new.comments, new.patient_directions, new.dose, new.reaction, new.codes);
END;

-- Reconciled facts: the copies of one clinical fact that several sources state are grouped; every
-- copy keeps its row, the group shows one (its lowest id its source still has). A copy that is not
-- shown points at the shown one here; an entry with no row here is shown. Kept apart from
-- `entries`, whose rows carry their source documents, so regrouping writes only this narrow table.
CREATE TABLE fact_copies (
    entry_id  INTEGER PRIMARY KEY REFERENCES entries(id) ON DELETE CASCADE,
    fact_id   INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE
);
CREATE INDEX fact_copies_fact ON fact_copies(fact_id);

-- The user's own say over grouping, which every regrouping (import, sync) applies last:
-- an entry split off stays a fact of its own; two entries joined stay one fact.
CREATE TABLE fact_splits (
    entry_id  INTEGER PRIMARY KEY REFERENCES entries(id) ON DELETE CASCADE
);
CREATE TABLE fact_joins (
    entry_id  INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    other_id  INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    PRIMARY KEY (entry_id, other_id),
    CHECK (entry_id < other_id)
) WITHOUT ROWID;
CREATE INDEX fact_joins_other ON fact_joins(other_id);
