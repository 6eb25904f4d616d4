import FluentKit
import Foundation
import Logging
import NIOPosix
import SQLKit
import YonaCrypto
import YonaDelivery
import YonaStore

/// A device's VPN login: `<userAnonymizedId>$<deviceIndex>`, the account's name in the directory and what the
/// network classifier reports the device's events under.
package enum VPNLogin {
    package static func id(_ userAnonymizedID: UUID, deviceIndex: Int) -> String {
        "\(userAnonymizedID.lowercasedString)$\(deviceIndex)"
    }
}

/// A change to one device's VPN account, as it waits in the outbox (sealed).
package enum VPNAccountChange: Codable, Sendable, Equatable {
    case create(login: String, passwordHash: String)
    case delete(login: String)
}

/// Queues VPN account changes in the caller's transaction (issue 15): a device that exists has its account queued
/// with it, and a device deleted has its deletion queued with it, so a directory that is down fails no request and
/// a process killed after the commit loses nothing. Nil where no directory is configured (`YONA_VPN_ACCOUNTS=none`).
package struct VPNAccountQueue: Sendable {
    package let key: SymmetricKey

    package func create(login: String, password: String, on db: any Database) async throws {
        try await queue(.create(login: login, passwordHash: LDAPPasswordHash.ssha(password)), on: db)
    }

    package func delete(login: String, on db: any Database) async throws {
        try await queue(.delete(login: login), on: db)
    }

    /// Deletes the accounts of every device an anonymized user still has (account deletion, overwrite).
    package func deleteAll(of userAnonymizedID: UUID, on db: any Database) async throws {
        let indexes = try await DeviceAnonymized.query(on: db).filter(\.$userAnonymized.$id == userAnonymizedID).all(\.$deviceIndex)
        for index in indexes.sorted() { try await delete(login: VPNLogin.id(userAnonymizedID, deviceIndex: index), on: db) }
    }

    private func queue(_ change: VPNAccountChange, on db: any Database) async throws {
        let sealed = AEAD.seal(Array(try CompactJSONEncoder.data(change)), key: key, associatedData: Self.associatedData)
        try await VPNChangeQueue.queue(sealed: Data(sealed), on: db)
    }

    package static let associatedData = Array("vpn_account_outbox.sealed".utf8)

    package init(key: SymmetricKey) {
        self.key = key
    }
}

/// Applies the queued changes to the directory, oldest first, one at a time: a failure stops the round (and is
/// retried with backoff) so no later change overtakes it. The head is claimed with a lease, so two instances never
/// apply one change twice at once; applying one twice is harmless anyway (create sets the password of an existing
/// account, delete of a missing one succeeds).
package struct VPNAccountOutbox: Sendable {
    package let db: any Database
    package let key: SymmetricKey
    package let directory: LDAPSettings
    package let threadPool: NIOThreadPool
    package let logger: Logger
    package var leaseSeconds: TimeInterval = 60
    package var backoffSeconds: TimeInterval = 2
    package var maxBackoffSeconds: TimeInterval = 600

    /// One round: applies due changes until none is left, the round's limit is reached, or one fails (which is
    /// thrown, for the background job to log and count). Returns how many were applied.
    @discardableResult
    package func drainOnce(now: Date = Date(), limit: Int = 200) async throws -> Int {
        var connection: LDAPConnection?
        var applied = 0
        while applied < limit, let head = try await claimHead(now: now) {
            do {
                guard let plain = try? AEAD.open(Array(head.sealed), key: key, associatedData: VPNAccountQueue.associatedData),
                    let change = try? CompactJSONDecoder.decode(VPNAccountChange.self, from: plain)
                else {
                    // Sealed under another recovery key (a restore without the secret): it can never be applied.
                    logger.error("vpn accounts: a queued change cannot be opened and is dropped")
                    try await core.delete([head.id])
                    continue
                }
                let open = connection
                let live = try await threadPool.runIfActive { () throws -> LDAPConnection in
                    let connection = try open ?? LDAPConnection(directory)
                    switch change {
                    case .create(let login, let hash): try connection.createAccount(login: login, passwordHash: hash)
                    case .delete(let login): try connection.deleteAccount(login: login)
                    }
                    return connection
                }
                connection = live
                try await core.delete([head.id])
                applied += 1
            } catch {
                try await release(head, error: error, now: now)
                throw error
            }
        }
        return applied
    }

    private typealias Head = VPNChangeQueue.Claimed

    /// The table's lifecycle: strictly the oldest change, never given up (an account must exist or go).
    private var core: Outbox<Int> {
        VPNChangeQueue.lifecycle(on: db, leaseSeconds: leaseSeconds, backoff: Backoff(base: backoffSeconds, cap: maxBackoffSeconds))
    }

    /// Claims the oldest change if it is due and not leased by another instance.
    private func claimHead(now: Date) async throws -> Head? {
        try await core.claim(now: now, limit: 1, returning: VPNChangeQueue.claimedColumns).first?.decode(model: Head.self)
    }

    /// A failed change waits (the one backoff rule, at most `maxBackoffSeconds`) and keeps its place at the head.
    private func release(_ head: Head, error: any Error, now: Date) async throws {
        let reason = (error as? LDAPFailure)?.description ?? String(reflecting: type(of: error))
        try await core.settle(head.id, attempts: head.attempts, createdAt: nil, outcome: .retry(reason), now: now)
    }

    package init(
        db: any Database, key: SymmetricKey, directory: LDAPSettings, threadPool: NIOThreadPool, logger: Logger, leaseSeconds: TimeInterval = 60,
        backoffSeconds: TimeInterval = 2, maxBackoffSeconds: TimeInterval = 600
    ) {
        self.db = db
        self.key = key
        self.directory = directory
        self.threadPool = threadPool
        self.logger = logger
        self.leaseSeconds = leaseSeconds
        self.backoffSeconds = backoffSeconds
        self.maxBackoffSeconds = maxBackoffSeconds
    }
}
