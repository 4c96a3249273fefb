-- hreader vault schema, migration 11: SMART Health Links shared (issue 37, docs/sharing.md).
--
-- One row per link made by `hreader share create`. `id` is random (32 bytes, base64url): the name
-- of the ciphertext (`static`: written to a directory for any web host, flag U) or the manifest's
-- path (`served`: handed out by `hreader serve --shares`, with a passcode when flag P). `link_key`
-- is the link's 32-byte AES key: it lives only in the link and here (the vault is encrypted).
-- `content` is the JWE a served link hands out (NULL for static ones, whose file is `file_path`).
-- `passcode_hash`: "scrypt$N$r$p$<salt base64>$<hash base64>"; `attempts_left` counts down on
-- each wrong passcode, and at 0 the link is locked. Accesses are counted here and logged in
-- audit_log ('share.access'), never with the record's content.
CREATE TABLE shares (
    id             TEXT PRIMARY KEY,
    patient_id     INTEGER REFERENCES patients(id) ON DELETE SET NULL,
    label          TEXT,
    created        TEXT NOT NULL,
    expires        TEXT,
    flag           TEXT NOT NULL DEFAULT '',
    mode           TEXT NOT NULL CHECK (mode IN ('static', 'served')),
    url            TEXT NOT NULL,
    file_path      TEXT,
    link_key       BLOB NOT NULL,
    content        TEXT,
    passcode_hash  TEXT,
    attempts_left  INTEGER,
    revoked        TEXT,
    accesses       INTEGER NOT NULL DEFAULT 0,
    last_access    TEXT
);
