-- hreader vault schema, migration 9: what a person's page reads, without reading everything (issue 41).
--
-- `patients show` counts a person's entries by type, and Apple Health samples are millions of them:
-- counting those row by row read the whole samples table. A series now keeps its count, added to by
-- SampleWriter as an import adds samples. Samples are never removed one by one (their series goes
-- whole, with its count), so nothing else writes it.
ALTER TABLE sample_series ADD COLUMN sample_count INTEGER NOT NULL DEFAULT 0;
UPDATE sample_series SET sample_count = (SELECT count(*) FROM samples WHERE series_id = sample_series.id);

-- A tile looks for one kind of reading (blood pressure, BMI, total cholesterol …), which it tells by
-- an entry's type, description and codes. The kinds of a type are read from this index alone, and the
-- newest entries of a kind from its end: a few rows, however long the record.
CREATE INDEX entries_patient_kind ON entries(patient_id, type, description, codes, coalesce(date_epoch, start_epoch, end_epoch));
