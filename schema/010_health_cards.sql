-- hreader vault schema, migration 10: SMART Health Cards received (issue 37, docs/sharing.md).
--
-- The issuers the user trusts: a card signed by one of them is "verified", by anyone else
-- "untrusted-issuer". `iss` is the issuer's base URL exactly as cards name it (no trailing slash).
-- `pinned`: the user gave the issuer's keys (`issuers add --jwks FILE`); they are never fetched.
-- `origin`: 'user' (issuers add) or the directory file's name (issuers import-directory).
CREATE TABLE card_issuers (
    iss     TEXT PRIMARY KEY,
    name    TEXT,
    pinned  INTEGER NOT NULL DEFAULT 0,
    origin  TEXT NOT NULL DEFAULT 'user',
    added   TEXT NOT NULL
);

-- Issuers' public keys (JWKs, as published), pinned or fetched from ISS/.well-known/jwks.json and
-- kept for when the issuer cannot be reached. Any issuer's, trusted or not: a key says who signed,
-- trust is card_issuers.
CREATE TABLE card_issuer_keys (
    iss      TEXT NOT NULL,
    kid      TEXT NOT NULL,
    jwk      TEXT NOT NULL,
    pinned   INTEGER NOT NULL DEFAULT 0,
    fetched  TEXT NOT NULL,
    PRIMARY KEY (iss, kid)
);

-- Revocation lists (ISS/.well-known/crl/KID.json), by key: `ctr` is the list's version, read again
-- when the key's crlVersion passes it; `list` the list as published (JSON text).
CREATE TABLE card_revocation_lists (
    iss      TEXT NOT NULL,
    kid      TEXT NOT NULL,
    ctr      INTEGER NOT NULL,
    list     TEXT NOT NULL,
    fetched  TEXT NOT NULL,
    PRIMARY KEY (iss, kid)
);

-- How an entry that a card brought was checked. Every entry of a card has one row; it goes with
-- the entry. `issuer` is the trusted issuer's name (NULL when not among them).
CREATE TABLE entry_verifications (
    entry_id     INTEGER PRIMARY KEY REFERENCES entries(id) ON DELETE CASCADE,
    status       TEXT NOT NULL CHECK (status IN ('verified', 'untrusted-issuer', 'unverified')),
    iss          TEXT NOT NULL,
    issuer       TEXT,
    kid          TEXT,
    verified_at  TEXT NOT NULL
);
