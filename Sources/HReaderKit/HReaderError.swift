import HReaderCrypto
import HReaderNet
import HReaderStore

/// The one error the command line shows: a category (which sets the exit code, DESIGN.md §9) and
/// one line saying what failed and what to do. Messages never carry secrets or health data.
public struct HReaderError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: Int32, Sendable {
        case failure = 1
        case usage = 2
        case authentication = 3
        case vaultPresence = 4
        case badInput = 5
        case network = 6
        case integrity = 7
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var exitCode: Int32 { kind.rawValue }
    public var description: String { message }

    public static func usage(_ message: String) -> HReaderError { HReaderError(.usage, message) }
    public static func badInput(_ message: String) -> HReaderError { HReaderError(.badInput, message) }

    /// Translates an error from a lower layer into what the user is told.
    public static func from(_ error: Error) -> HReaderError {
        switch error {
        case let e as HReaderError:
            return e
        case let e as KeyFileError:
            switch e {
            case let .damaged(why): return HReaderError(.integrity, "the key file vault.key is damaged: \(why); restore it from a backup")
            case let .unsupportedVersion(v): return HReaderError(.integrity, "the key file has version \(v), which this hreader does not know (damaged, or written by a newer hreader)")
            case .wrongSecret(.password): return HReaderError(.authentication, "wrong password; nothing was changed")
            case .wrongSecret(.questions): return HReaderError(.authentication, "the answers do not match; nothing was changed")
            case .wrongSecret(.recovery): return HReaderError(.authentication, "wrong recovery key; nothing was changed")
            case let .noSlot(kind): return HReaderError(.authentication, "this vault has no \(kind.rawValue) key slot")
            case let .noSuchSlot(id): return HReaderError(.usage, "no key slot matches '\(id)'; see 'hreader key list'")
            case .lastPasswordSlot: return HReaderError(.usage, "refusing to remove the last password slot; add another password first")
            }
        case let e as UnlockSession.Failure:
            switch e {
            case .malformedToken: return HReaderError(.authentication, "HREADER_SESSION is not a valid session token; run 'hreader unlock' again")
            case .expired: return HReaderError(.authentication, "the unlock session has expired; run 'hreader unlock' again")
            case .invalid: return HReaderError(.authentication, "the unlock session is unknown or was ended by 'hreader lock'; run 'hreader unlock' again")
            }
        case let e as Vault.Failure:
            switch e {
            case let .noVault(path): return HReaderError(.vaultPresence, "no vault at \(path); create one with 'hreader init' or point --vault at it")
            case let .alreadyExists(path): return HReaderError(.vaultPresence, "a vault already exists at \(path)")
            case let .keyFileMissing(path): return HReaderError(.integrity, "\(path) has vault.db but no vault.key: restore vault.key from a backup (without it the database cannot be opened)")
            case let .notEmpty(path): return HReaderError(.vaultPresence, "\(path) is not empty and holds no vault; choose a new or empty directory")
            case let .databaseMissing(path): return HReaderError(.integrity, "the vault database \(path) is missing; restore it from a backup")
            case .inUse: return HReaderError(.failure, "the vault is open in another hreader process (serve, an import, a sync); stop it and try again")
            case .lockHeld: return HReaderError(.failure, "another hreader process is changing the vault's keys; try again when it has finished")
            case let .io(what): return HReaderError(.failure, what)
            }
        case let e as Database.OpenFailure:
            switch e {
            case .plaintextDatabase: return HReaderError(.integrity, "vault.db is a plaintext SQLite file, not an encrypted vault; refusing to open it")
            case .notADatabaseUnderThisKey: return HReaderError(.integrity, "vault.db cannot be decrypted with this vault's key: it is damaged or was replaced")
            case let .cipherTooOld(v): return HReaderError(.failure, "SQLCipher \(v) is too old; hreader needs 4.5 or newer (run 'make deps')")
            case .cipherMissing: return HReaderError(.failure, "the SQLite library in use is not SQLCipher; hreader refuses to run without encryption")
            case .fileReplaced: return HReaderError(.failure, "vault.db was replaced while it was being opened (a rekey); try again")
            case .fullTextSearchMissing:
                return HReaderError(.failure, "this SQLCipher build has no FTS5 (full-text search), which the vault's search index needs; install a build with it ('make deps')")
            }
        case let e as Migrator.Failure:
            switch e {
            case let .vaultNewerThanBinary(v, s): return HReaderError(.failure, "this vault has schema version \(v) but this hreader knows only up to \(s); upgrade hreader")
            case let .regroupingNeeded(v): return HReaderError(.failure, "upgrading this vault to schema \(v) regroups its facts, which this opener cannot do")
            }
        case let e as DatabaseError:
            if e.isIntegrityFailure { return HReaderError(.integrity, "the vault database is damaged (\(e.message)); restore it from a backup") }
            if e.isBusy { return HReaderError(.failure, "the vault is busy in another hreader process; try again") }
            return HReaderError(.failure, "database error: \(e.message)")
        case let e as NetError:
            return from(network: e)
        case let e as SmartError:
            return from(smart: e)
        case let e as CryptoError:
            switch e {
            case let .invalidParameters(why): return HReaderError(.usage, why)
            default: return HReaderError(.failure, "cryptographic operation failed: \(e)")
            }
        case let e as AtomicFile.Error:
            return HReaderError(.failure, e.description)
        default:
            return HReaderError(.failure, "\(error)")
        }
    }
}
