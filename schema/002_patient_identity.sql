-- hreader vault schema, migration 2: who a record is about, across sources and files.
--
-- A patient is known by identities: the identifiers of their FHIR Patient resources
-- ('identifier', 'system|value') and the ids their sources give them ('reference',
-- '<scope>|Patient/<id>', the scope being a FHIR server's base URL, or 'file' for the relative
-- references of files). A resource about a patient is filed under the one patient one of its
-- identities names, never guessed; one that names no patient in the vault yet waits in
-- pending_resources until that patient is imported.

CREATE TABLE patient_identities (
    kind        TEXT NOT NULL CHECK (kind IN ('identifier', 'reference')),
    value       TEXT NOT NULL,
    patient_id  INTEGER NOT NULL REFERENCES patients(id) ON DELETE CASCADE,
    PRIMARY KEY (kind, value, patient_id)
) WITHOUT ROWID;
CREATE INDEX patient_identities_patient ON patient_identities(patient_id);

-- Resources whose patient is not in the vault yet (a Bulk Data export imported one file at a
-- time, Condition.ndjson before Patient.ndjson). Encrypted like everything else in the vault.
CREATE TABLE pending_resources (
    id             INTEGER PRIMARY KEY,
    source_id      INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    remote_id      TEXT NOT NULL,
    subject_kind   TEXT NOT NULL CHECK (subject_kind IN ('identifier', 'reference')),
    subject_value  TEXT NOT NULL,
    raw            TEXT NOT NULL,   -- the resource, as received
    created        TEXT NOT NULL,
    UNIQUE (source_id, remote_id)
);
CREATE INDEX pending_resources_subject ON pending_resources(subject_kind, subject_value);

-- The identities of the patients already here: the identifiers of their FHIR Patient resources…
INSERT OR IGNORE INTO patient_identities (kind, value, patient_id)
SELECT 'identifier', json_extract(i.value, '$.system') || '|' || json_extract(i.value, '$.value'), p.id
FROM patients p, json_each(p.raw, '$.identifier') i
WHERE json_valid(p.raw) AND json_extract(p.raw, '$.resourceType') = 'Patient'
  AND json_type(p.raw, '$.identifier') = 'array'
  AND json_type(i.value, '$.system') = 'text' AND json_extract(i.value, '$.system') <> ''
  AND json_type(i.value, '$.value') = 'text' AND json_extract(i.value, '$.value') <> '';

-- … and the ids their FHIR servers and files gave them.
INSERT OR IGNORE INTO patient_identities (kind, value, patient_id)
SELECT 'reference', (CASE s.kind WHEN 'file' THEN 'file' ELSE s.base_url END) || '|Patient/' || p.remote_id, p.id
FROM patients p JOIN sources s ON s.id = p.source_id
WHERE s.kind IN ('fhir', 'file') AND s.base_url IS NOT NULL
  AND json_valid(p.raw) AND json_extract(p.raw, '$.resourceType') = 'Patient';

-- Files are one source, whatever their path: the same download from another folder is the same
-- record. The per-path sources of earlier versions move into it where nothing collides (what
-- does, the same file imported from two paths before, stays where it is).
INSERT INTO sources (uuid, kind, base_url, display_name, created, updated)
SELECT lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2)
       || '-' || substr('89ab', 1 + abs(random()) % 4, 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
       'file', 'file:', 'Imported files', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
WHERE EXISTS (SELECT 1 FROM sources WHERE kind = 'file')
  AND NOT EXISTS (SELECT 1 FROM sources WHERE kind = 'file' AND base_url = 'file:');
UPDATE OR IGNORE patients SET source_id = (SELECT id FROM sources WHERE kind = 'file' AND base_url = 'file:')
WHERE source_id IN (SELECT id FROM sources WHERE kind = 'file' AND base_url <> 'file:');
UPDATE OR IGNORE entries SET source_id = (SELECT id FROM sources WHERE kind = 'file' AND base_url = 'file:')
WHERE source_id IN (SELECT id FROM sources WHERE kind = 'file' AND base_url <> 'file:');
DELETE FROM sources
WHERE kind = 'file' AND base_url <> 'file:'
  AND NOT EXISTS (SELECT 1 FROM patients WHERE source_id = sources.id)
  AND NOT EXISTS (SELECT 1 FROM entries WHERE source_id = sources.id);
