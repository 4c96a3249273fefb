-- hreader vault schema, migration 1: the whole model of DESIGN.md §3.
-- Times: *_text keeps what the source said (partial dates, offsets); *_epoch is the instant in
-- epoch seconds (UTC) used for ordering and range queries. Bare and partial dates ("2012-05-01",
-- "2012-05", "2012") take the start of the period at local midnight for *_epoch and keep their
-- precision in *_text.

CREATE TABLE sources (
    id            INTEGER PRIMARY KEY,
    uuid          TEXT NOT NULL UNIQUE,
    kind          TEXT NOT NULL CHECK (kind IN ('fhir', 'rhex', 'apple-health', 'file', 'manual')),
    base_url      TEXT,
    display_name  TEXT NOT NULL,
    auth_kind     TEXT NOT NULL DEFAULT 'none' CHECK (auth_kind IN ('none', 'bearer', 'basic', 'oauth2')),
    credentials   TEXT,             -- JSON; tokens live only here, inside the encrypted vault
    last_sync     TEXT,
    created       TEXT NOT NULL,
    updated       TEXT NOT NULL
);
CREATE UNIQUE INDEX sources_kind_url ON sources(kind, base_url) WHERE base_url IS NOT NULL;

-- The one source for everything typed in by the user.
INSERT INTO sources (uuid, kind, display_name, created, updated)
VALUES ('00000000-0000-4000-8000-000000000000', 'manual', 'Entered by hand',
        strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));

CREATE TABLE patients (
    id            INTEGER PRIMARY KEY,
    uuid          TEXT NOT NULL UNIQUE,
    source_id     INTEGER NOT NULL REFERENCES sources(id) ON DELETE RESTRICT,
    remote_id     TEXT NOT NULL,
    first_name    TEXT NOT NULL DEFAULT '',
    last_name     TEXT NOT NULL DEFAULT '',
    gender        TEXT,
    birth_date    TEXT,             -- ISO 8601 date, possibly partial
    race          TEXT,
    ethnicity     TEXT,
    relationship  TEXT NOT NULL DEFAULT 'other'
                  CHECK (relationship IN ('me', 'spouse', 'child', 'family', 'other')),
    display_order INTEGER NOT NULL DEFAULT 0,
    raw           TEXT,             -- the source document, as received
    created       TEXT NOT NULL,
    updated       TEXT NOT NULL,
    UNIQUE (source_id, remote_id)
);
CREATE INDEX patients_order ON patients(display_order, last_name, first_name);

CREATE TABLE entries (
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
    codes              TEXT NOT NULL DEFAULT '{}',   -- JSON object: code system -> [codes]
    value_number       REAL,
    value_text         TEXT,
    unit               TEXT,
    dose               TEXT,
    reaction           TEXT,
    severity           TEXT,
    raw                TEXT,             -- the source resource, lossless
    -- The user's own fields: never overwritten by a re-import or sync.
    comments           TEXT,
    patient_quantity   TEXT,
    patient_dose       TEXT,
    patient_directions TEXT,
    patient_prescriber TEXT,
    user_deleted       INTEGER NOT NULL DEFAULT 0 CHECK (user_deleted IN (0, 1)),
    -- Set by a sync when the source no longer has the entry; the entry is kept.
    missing_at_source  TEXT,
    created            TEXT NOT NULL,
    updated            TEXT NOT NULL,
    UNIQUE (patient_id, source_id, remote_id)
);
-- Timeline and range queries: an entry is in a range when its date, start or end is.
CREATE INDEX entries_patient_date  ON entries(patient_id, date_epoch)  WHERE date_epoch IS NOT NULL;
CREATE INDEX entries_patient_start ON entries(patient_id, start_epoch) WHERE start_epoch IS NOT NULL;
CREATE INDEX entries_patient_end   ON entries(patient_id, end_epoch)   WHERE end_epoch IS NOT NULL;
CREATE INDEX entries_patient_type  ON entries(patient_id, type);

CREATE TABLE timeline_items (
    id          INTEGER PRIMARY KEY,
    uuid        TEXT NOT NULL UNIQUE,
    patient_id  INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    type        TEXT NOT NULL,       -- 'levels', 'medication', 'regimen', or others as posted
    data        TEXT NOT NULL CHECK (json_valid(data) AND json_type(data) = 'object'),
    time_epoch  INTEGER NOT NULL,    -- where the item sits on the timeline
    created     TEXT NOT NULL
);
CREATE INDEX timeline_items_patient_time ON timeline_items(patient_id, time_epoch);

CREATE TABLE patient_applets (
    patient_id  INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    applet      TEXT NOT NULL,       -- the applet's reverse-DNS identifier
    position    INTEGER NOT NULL,
    PRIMARY KEY (patient_id, applet)
);

-- Each applet's private key/value sandbox, per patient.
CREATE TABLE applet_data (
    applet      TEXT NOT NULL,
    patient_id  INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    value       BLOB,
    updated     TEXT NOT NULL,
    PRIMARY KEY (applet, patient_id, key)
);

-- What happened, when, from or to where. Never the health data itself.
CREATE TABLE audit_log (
    id       INTEGER PRIMARY KEY,
    at       TEXT NOT NULL,
    action   TEXT NOT NULL,
    subject  TEXT,
    detail   TEXT
);

-- Small vault-wide settings (e.g. the selected patient).
CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
