-- hreader vault schema, migration 8: documents and Apple Health sample series carry the record
-- they came with (security review 3, M-3).
--
-- Entries have known their record since migration 5 (source_patient_id: the patient row of the
-- source's record that stated them), so an unmerge gives back every entry the other person's
-- sources stated, those imported while merged included. Documents and sample series knew only the
-- person they are shown under: an unmerge gave back those the merge had moved, and left those
-- imported while merged with the person kept. Now they carry their record too, and an unmerge moves
-- back everything whose record is the other person's. A document added by hand, and a series of an
-- export imported under a person, belong to that person's own row.
ALTER TABLE documents ADD COLUMN source_patient_id INTEGER REFERENCES patients(id) ON DELETE CASCADE;
ALTER TABLE sample_series ADD COLUMN source_patient_id INTEGER REFERENCES patients(id) ON DELETE CASCADE;

-- A document's record: that of the entry whose attachment it is (origin `DocumentReference/abc#content[0]`
-- is the entry `DocumentReference/abc` of the same source), else the first merge that moved it (the
-- record it had before any merge), else the person it is shown under.
UPDATE documents SET source_patient_id = coalesce(
    (SELECT e.source_patient_id FROM entries e
     WHERE documents.origin IS NOT NULL AND instr(documents.origin, '#') > 0
       AND e.source_id = documents.source_id AND e.patient_id = documents.patient_id
       AND e.remote_id = substr(documents.origin, 1, instr(documents.origin, '#') - 1)
     ORDER BY e.id LIMIT 1),
    (SELECT m.other_id FROM patient_merges m, json_each(m.undo, '$.moved.documents') j
     WHERE m.undone_at IS NULL AND j.value = documents.id ORDER BY m.id LIMIT 1),
    patient_id);

-- A series' record: the patient its Apple Health source is keyed by (`apple-health:<uuid>`), else the
-- first merge that moved it, else the person it is shown under.
UPDATE sample_series SET source_patient_id = coalesce(
    (SELECT p.id FROM sources s JOIN patients p ON s.base_url = 'apple-health:' || p.uuid WHERE s.id = sample_series.source_id),
    (SELECT m.other_id FROM patient_merges m, json_each(m.undo, '$.moved.sample_series') j
     WHERE m.undone_at IS NULL AND j.value = sample_series.id ORDER BY m.id LIMIT 1),
    patient_id);

CREATE INDEX documents_record ON documents(source_patient_id);
CREATE INDEX sample_series_record ON sample_series(source_patient_id);
