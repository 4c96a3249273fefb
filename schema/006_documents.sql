-- Documents (issue 26): a person's clinical notes, reports, scans and PDFs, as bytes plus what they
-- are. Fetched from a FHIR DocumentReference / DiagnosticReport.presentedForm / Media attachment,
-- decoded from an inline attachment or a C-CDA nonXMLBody, or added by the user (the manual source:
-- "added by you"). Everything lives inside the SQLCipher database: the bytes in chunks (so a 50 MB
-- PDF is never whole in memory, written and read one chunk at a time), the readable text beside
-- them, and its full-text index. Nothing is ever written to disk in plaintext.
CREATE TABLE documents (
    id             INTEGER PRIMARY KEY,
    uuid           TEXT NOT NULL UNIQUE,
    patient_id     INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    source_id      INTEGER NOT NULL REFERENCES sources(id) ON DELETE RESTRICT,
    -- Where it came from: `DocumentReference/abc#content[0]` (the resource and the attachment's place
    -- in it); NULL for a document added by the user.
    origin         TEXT,
    -- The attachment's url as given (`Binary/7`, an absolute URL), when it had one.
    url            TEXT,
    title          TEXT NOT NULL DEFAULT '',
    content_type   TEXT,
    -- The stored bytes: their count and SHA-256 (hex); NULL while nothing is stored.
    size           INTEGER,
    sha256         TEXT,
    date_text      TEXT,
    date_epoch     INTEGER,
    -- What the source declared (attachment.size, attachment.hash: base64 SHA-1), and how it answered
    -- (ETag, the resource's meta.versionId): a re-import fetches again only when these change.
    declared_size  INTEGER,
    declared_hash  TEXT,
    etag           TEXT,
    version        TEXT,
    -- fetched: the bytes are here. failed: a fetch failed (reason), tried again at the next import or
    -- sync. reference: kept as a reference only, never fetched (reason: type not allowed, too large,
    -- another host, ...).
    state          TEXT NOT NULL CHECK (state IN ('fetched', 'failed', 'reference')),
    reason         TEXT,
    attempts       INTEGER NOT NULL DEFAULT 0,
    -- The readable text (plain text, HTML and RTF reduced to text), for display and search.
    text           TEXT,
    created        TEXT NOT NULL,
    updated        TEXT NOT NULL
);
-- Not unique: merging people (schema 5, PatientMergeRepository) moves a person's documents to the one
-- kept, and two records of one source may both have held the same attachment; imports take the first.
CREATE INDEX documents_origin ON documents(patient_id, source_id, origin) WHERE origin IS NOT NULL;
CREATE INDEX documents_patient_date ON documents(patient_id, date_epoch);

-- The bytes, in order, at most 256 KiB a chunk.
CREATE TABLE document_chunks (
    id           INTEGER PRIMARY KEY,
    document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    bytes        BLOB NOT NULL,
    UNIQUE (document_id, seq)
);

-- Documents' title and readable text in the full-text index, beside entries_search (same tokenizer),
-- kept current by triggers.
CREATE VIRTUAL TABLE documents_search USING fts5(
    title, text,
    content = 'documents', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER documents_search_insert AFTER INSERT ON documents BEGIN
    INSERT INTO documents_search (rowid, title, text) VALUES (new.id, new.title, new.text);
END;

CREATE TRIGGER documents_search_delete AFTER DELETE ON documents BEGIN
    INSERT INTO documents_search (documents_search, rowid, title, text) VALUES ('delete', old.id, old.title, old.text);
END;

CREATE TRIGGER documents_search_update AFTER UPDATE OF title, text ON documents BEGIN
    INSERT INTO documents_search (documents_search, rowid, title, text) VALUES ('delete', old.id, old.title, old.text);
    INSERT INTO documents_search (rowid, title, text) VALUES (new.id, new.title, new.text);
END;
