-- hreader vault schema, migration 12: how a document's readable text was obtained (issue 39).
--
-- Text-like documents (plain text, HTML, RTF, XML) have had their text since migration 6. PDFs and
-- images now get theirs from helpers run as sandboxed child processes (pdftotext for a PDF's own text
-- layer, Tesseract's OCR for scans and photos). text_method says which:
--   text      read in process (plain text, HTML, RTF, XML)
--   pdf-text  the PDF's text layer (pdftotext)
--   ocr       Tesseract (alone, or for the pages of a PDF without a text layer); text_confidence is
--             Tesseract's mean word confidence, 0 to 100
--   none      no text; text_note says why ("install tesseract-ocr", "the helper refused the file: ...")
--   pending   waiting for extraction (an import's bound was reached; `documents reindex` does it)
-- NULL: not looked at (a document not fetched).
ALTER TABLE documents ADD COLUMN text_method TEXT
    CHECK (text_method IS NULL OR text_method IN ('text', 'pdf-text', 'ocr', 'none', 'pending'));
ALTER TABLE documents ADD COLUMN text_confidence REAL;
ALTER TABLE documents ADD COLUMN text_note TEXT;
-- The OCR languages the text was read with (`eng`, `eng+deu`), for a reindex after one is installed.
ALTER TABLE documents ADD COLUMN text_languages TEXT;

-- Documents of earlier vaults: text already read is `text`; a fetched PDF or image waits for extraction.
UPDATE documents SET text_method = 'text' WHERE text IS NOT NULL;
UPDATE documents SET text_method = 'pending'
 WHERE text IS NULL AND state = 'fetched'
   AND (content_type LIKE 'application/pdf%' OR content_type LIKE 'image/%');
UPDATE documents SET text_method = 'none', text_note = 'no readable text in this kind of document'
 WHERE text_method IS NULL AND state = 'fetched';

CREATE INDEX documents_text_pending ON documents(id) WHERE text_method = 'pending';
