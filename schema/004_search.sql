-- Full-text search over what a person reads and writes in their record (hreader search): an FTS5
-- index over the entries' own columns (external content: the text stays in `entries`, the index
-- holds tokens), kept current by triggers in the same transaction as every write, so imports, sync,
-- `entries add|comment|strike`, merges and deletes need no code of their own. Like every table it
-- lives inside the SQLCipher database, so the index is encrypted with the rest.
CREATE VIRTUAL TABLE entries_search USING fts5(
    description, value_text, comments, patient_directions, dose, reaction, codes,
    content = 'entries', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER entries_search_insert AFTER INSERT ON entries BEGIN
    INSERT INTO entries_search (rowid, description, value_text, comments, patient_directions, dose, reaction, codes)
    VALUES (new.id, new.description, new.value_text, new.comments, new.patient_directions, new.dose, new.reaction, new.codes);
END;

CREATE TRIGGER entries_search_delete AFTER DELETE ON entries BEGIN
    INSERT INTO entries_search (entries_search, rowid, description, value_text, comments, patient_directions, dose, reaction, codes)
    VALUES ('delete', old.id, old.description, old.value_text, old.comments, old.patient_directions, old.dose, old.reaction, old.codes);
END;

CREATE TRIGGER entries_search_update AFTER UPDATE OF description, value_text, comments, patient_directions, dose, reaction, codes ON entries
BEGIN
    INSERT INTO entries_search (entries_search, rowid, description, value_text, comments, patient_directions, dose, reaction, codes)
    VALUES ('delete', old.id, old.description, old.value_text, old.comments, old.patient_directions, old.dose, old.reaction, old.codes);
    INSERT INTO entries_search (rowid, description, value_text, comments, patient_directions, dose, reaction, codes)
    VALUES (new.id, new.description, new.value_text, new.comments, new.patient_directions, new.dose, new.reaction, new.codes);
END;

-- A vault from before: index what is there.
INSERT INTO entries_search (entries_search) VALUES ('rebuild');
