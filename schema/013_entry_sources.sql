-- hreader vault schema, migration 13: which sources a person's entries came from, from an index
-- (issue 41). A clinician's summary and `share create` name the sources of the record; without
-- this, that question read every entry row of the person (a clinical record's source documents
-- are in the rows: 4,000 pages decrypted for 17,000 entries, most of the summary's time).
CREATE INDEX entries_patient_source ON entries(patient_id, source_id);
