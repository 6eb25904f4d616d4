import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaStore

/// Buddy relations: requests and responses travel as sealed direct messages between identities; the
/// anonymized halves (`buddies_anonymized`) let goal-conflict copies flow without anyone's secret.
package struct BuddyService: Sendable {
    package typealias Status = PrivateBuddy.Status

    package let db: any Database
    package let users: UserService

    package var notices: MessageNotices { MessageNotices(db: db, sms: users.sms, rateLimitKey: users.recovery.rateLimitKey) }

    /// Where a new number is invited: the invitation service and the link that carries the temporary password.
    package struct Inviting: Sendable {
        package let invitations: InvitationService
        package let link: @Sendable (_ inviteeID: UUID, _ temporaryPassword: String) -> String

        package init(invitations: InvitationService, link: @escaping @Sendable (_ inviteeID: UUID, _ temporaryPassword: String) -> String) {
            self.invitations = invitations
            self.link = link
        }
    }

    /// Invites a number; two-way only. A number without an account gets one "created on buddy request"
    /// and an invitation by SMS (and e-mail when an address is given).
    package func request(
        from user: UnlockedUser, firstName: String, lastName: String, mobileNumber: MobileNumber, emailAddress: String?,
        message: String?, sendingStatus: String, receivingStatus: String, inviting: Inviting
    ) async throws -> (UnlockedUser, PrivateBuddy) {
        guard user.isConfirmed else { throw YonaError(.mobileNumberNotConfirmed) }
        guard sendingStatus == Status.requested.rawValue, receivingStatus == Status.requested.rawValue else {
            throw YonaError(.buddyOnlyTwoWay)
        }
        guard mobileNumber.value != user.mobileNumber else { throw YonaError(.buddyCannotInviteSelf) }
        guard !user.privateData.buddies.contains(where: { $0.mobileNumber == mobileNumber.value }) else {
            throw YonaError(.buddyCannotInviteExisting)
        }
        let existingID = try await User.query(on: db).filter(\.$mobileNumber == mobileNumber.value).first()?.id
        let invitee =
            existingID == nil
            ? try await inviting.invitations.prepare(firstName: firstName, lastName: lastName, mobileNumber: mobileNumber, inviter: user.id)
            : nil
        guard let inviteeID = existingID ?? invitee?.userID else { throw YonaError(.unexpected) }
        let now = Date()
        let buddy = PrivateBuddy(
            id: UUID(), userID: inviteeID, firstName: firstName, lastName: lastName, nickname: firstName,
            mobileNumber: mobileNumber.value, sendingStatus: .requested, receivingStatus: .requested,
            lastStatusChangeTime: now, buddyAnonymizedID: UUID(), buddyUserAnonymizedID: nil)
        let invitation = invitee.map { invitee in
            BuddyInvitation(
                inviterFirstName: user.privateData.firstName, inviterLastName: user.privateData.lastName,
                inviteeFirstName: firstName, inviteeLastName: lastName,
                link: inviting.link(invitee.userID, invitee.temporaryPassword))
        }
        let updated: UnlockedUser
        let afterCommit: (@Sendable () async -> Void)?
        do {
            (updated, afterCommit) = try await db.transaction { tx in
                try await invitee?.insert(on: tx)
                try await BuddyAnonymized(
                    id: buddy.buddyAnonymizedID, ownerID: user.privateData.userAnonymizedID, buddyUserAnonymizedID: nil,
                    sendingStatus: Status.requested.rawValue, receivingStatus: Status.requested.rawValue
                ).create(on: tx)
                let updated = try await users.modifyPrivateData(user, on: tx) { $0.buddies.append(buddy) }
                try await MessageWriter.deliverNamed(
                    to: inviteeID, on: tx, now: now,
                    MessagePayload(
                        kind: .buddyConnectRequest, messageID: 0, subjectUserAnonymizedID: user.privateData.userAnonymizedID,
                        status: Status.requested.rawValue, text: message, sender: Self.sender(user), buddyID: buddy.id,
                        buddyAnonymizedID: buddy.buddyAnonymizedID, deviceNames: user.privateData.devices.map(\.name),
                        deviceAnonymizedIDs: user.privateData.devices.map(\.deviceAnonymizedID)))
                // The invitation's text and mail are queued with the invited account: both exist, or neither.
                var queued: (@Sendable () async -> Void)?
                if let invitation {
                    queued = try await inviting.invitations.queue(invitation, to: mobileNumber, emailAddress: emailAddress, in: tx)
                }
                return (updated, queued)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure && invitee != nil {
            // Someone registered or invited the number meanwhile: invite that account instead.
            return try await request(
                from: user, firstName: firstName, lastName: lastName, mobileNumber: mobileNumber,
                emailAddress: emailAddress, message: message, sendingStatus: sendingStatus,
                receivingStatus: receivingStatus, inviting: inviting)
        }
        if existingID != nil { await notices.send(to: [inviteeID]) }
        await afterCommit?()
        return (updated, buddy)
    }

    /// Accepts or rejects a buddy request in the user's inbox.
    package func respond(_ user: UnlockedUser, to message: OpenedMessage, accept: Bool, text: String?) async throws -> UnlockedUser {
        let request = message.payload
        guard request.kind == .buddyConnectRequest, request.status == Status.requested.rawValue,
            let sender = request.sender, let requesterBuddyID = request.buddyID, let requesterHalf = request.buddyAnonymizedID
        else {
            throw YonaError(.messageActionNotSupported)
        }
        if try await MessageService(db: db).isWithdrawn(request) { throw YonaError(.messageNotFound) }
        if accept, try await User.find(sender.userID, on: db) == nil {
            // The requester's account is gone (deleted or overwritten): nothing to connect to, and the request goes
            // as a withdrawn one does. (Not `error.user.not.found.id`: Yona's Android app reads it as its own account gone.)
            throw YonaError(.messageNotFound)
        }
        let now = Date()
        let me = user.privateData.userAnonymizedID
        var answered = request
        answered.status = (accept ? Status.accepted : Status.rejected).rawValue
        let responded = try await db.transaction { [answered] tx in
            try await MessageWriter.transition(message, recipient: me, inbox: try user.anonymousInbox(), on: tx, answered)
            var updated = user
            if accept {
                // Accepted, the request relates accepted buddies: it goes with the requester's other messages when the
                // requester leaves or disconnects (written without a sender while it only waited).
                try await tx.sql.raw(
                    """
                    UPDATE \(unsafeRaw: Message.schema) SET sender_anonymized_id = \(bind: request.subjectUserAnonymizedID)
                    WHERE id = \(bind: message.id) AND user_anonymized_id = \(bind: me)
                    """
                ).run()
                let buddy = PrivateBuddy(
                    id: UUID(), userID: sender.userID, firstName: sender.firstName, lastName: sender.lastName,
                    nickname: sender.nickname, mobileNumber: sender.mobileNumber, sendingStatus: .accepted,
                    receivingStatus: .accepted, lastStatusChangeTime: now, buddyAnonymizedID: UUID(),
                    buddyUserAnonymizedID: request.subjectUserAnonymizedID, deviceNames: request.deviceNames,
                    deviceAnonymizedIDs: request.deviceAnonymizedIDs, photoID: sender.photoID)
                try await BuddyAnonymized(
                    id: buddy.buddyAnonymizedID, ownerID: me, buddyUserAnonymizedID: request.subjectUserAnonymizedID,
                    sendingStatus: Status.accepted.rawValue, receivingStatus: Status.accepted.rawValue
                ).create(on: tx)
                // The requester's half starts sharing now, so conflicts flow before the requester's next call.
                try await BuddyAnonymized.query(on: tx).filter(\.$id == requesterHalf)
                    .filter(\.$owner.$id == request.subjectUserAnonymizedID)
                    .set(\.$buddyUserAnonymizedID, to: me)
                    .set(\.$sendingStatus, to: Status.accepted.rawValue)
                    .set(\.$receivingStatus, to: Status.accepted.rawValue)
                    .update()
                updated = try await users.modifyPrivateData(user, on: tx) { data in
                    data.buddies.removeAll { $0.userID == sender.userID }
                    data.buddies.append(buddy)
                }
            }
            try await MessageWriter.deliverNamed(
                to: sender.userID, on: tx, now: now,
                MessagePayload(
                    kind: .buddyConnectResponse, messageID: 0, subjectUserAnonymizedID: me,
                    status: answered.status, text: text, sender: Self.sender(user), buddyID: requesterBuddyID,
                    deviceNames: accept ? user.privateData.devices.map(\.name) : nil,
                    deviceAnonymizedIDs: accept ? user.privateData.devices.map(\.deviceAnonymizedID) : nil))
            return updated
        }
        await notices.send(to: [sender.userID])
        return responded
    }

    /// Ends a relation from one side; the other side hears it with `reason`.
    package func remove(_ buddyID: UUID, of user: UnlockedUser, reason: String, text: String?) async throws -> UnlockedUser {
        guard let buddy = user.privateData.buddies.first(where: { $0.id == buddyID }) else { throw YonaError(.buddyNotFound) }
        let updated = try await db.transaction { tx in
            try await disconnect(buddy, of: user, reason: reason, text: text, on: tx)
            // What the buddy sent or shared leaves the user's own inbox too (as Yona).
            if let other = buddy.buddyUserAnonymizedID {
                try await MessageWriter.deleteAll(from: other, in: user.privateData.userAnonymizedID, on: tx)
            }
            return try await users.modifyPrivateData(user, on: tx) { $0.buddies.removeAll { $0.id == buddyID } }
        }
        await notices.send(to: [buddy.userID])
        return updated
    }

    /// Tells every buddy that the account is going (inside the deletion's transaction), with the user's last words.
    package func disconnectAll(of user: UnlockedUser, text: String? = nil, on tx: any Database) async throws {
        for buddy in user.privateData.buddies {
            try await disconnect(buddy, of: user, reason: "USER_ACCOUNT_DELETED", text: text, on: tx)
        }
    }

    /// Ends the relation on the anonymized side. A buddy who had accepted is told and loses what the user sent or
    /// shared; a request not answered yet is simply withdrawn (it vanishes from the invitee's inbox, as Yona's).
    private func disconnect(_ buddy: PrivateBuddy, of user: UnlockedUser, reason: String, text: String?, on tx: any Database) async throws {
        let me = user.privateData.userAnonymizedID
        try await BuddyAnonymized.query(on: tx).filter(\.$id == buddy.buddyAnonymizedID).delete()
        if let other = buddy.buddyUserAnonymizedID {
            // Stop the other side's half from sharing with me at once.
            try await BuddyAnonymized.query(on: tx).filter(\.$owner.$id == other).filter(\.$buddyUserAnonymizedID == me).delete()
            try await MessageWriter.deleteAll(from: me, in: other, on: tx)
        }
        guard buddy.sendingStatus == .accepted else { return }
        try await MessageWriter.deliverNamed(
            to: buddy.userID, on: tx, now: Date(),
            MessagePayload(
                kind: .buddyDisconnect, messageID: 0, subjectUserAnonymizedID: me, text: text, sender: Self.sender(user), reason: reason))
    }

    /// Moves direct messages into the anonymous inbox (where they get an id and a push) and applies what
    /// they mean to the user's own buddy list. Runs on each authenticated call; when several calls of one
    /// user run at once, each message is moved by exactly one of them (the one whose `DELETE` took it).
    package func processNamedInbox(_ user: UnlockedUser) async throws -> UnlockedUser {
        let pending = try await NamedMessage.query(on: db).filter(\.$user.$id == user.id).sort(\.$createdAt).all()
        guard !pending.isEmpty, let secret = user.privateData.namedInboxSecretKey else { return user }
        let inbox = BoxKeyPair(secretKey: try SymmetricKey(bytes: Array(secret)))
        return try await db.transaction { tx in
            var current = user
            // What a buddy sent before disconnecting (or deleting the account) goes with the disconnect: a buddy's
            // messages already moved were deleted from this inbox then; the ones still waiting here are skipped.
            // In the order they were sent: the sealed instant (the plain column holds the day only; older messages
            // carry no instant and keep their column's).
            var opened: [(named: NamedMessage, payload: MessagePayload?, sentAt: Date)] = []
            for named in pending {
                let payload = (try? SealedBox.open(Array(named.sealedPayload), keyPair: inbox)).flatMap {
                    try? CompactJSONDecoder.decode(MessagePayload.self, from: $0)
                }
                opened.append((named, payload, payload?.sentAt ?? named.createdAt))
            }
            opened.sort { $0.sentAt < $1.sentAt }
            var disconnectedAt: [UUID: Date] = [:]
            for (_, payload, sentAt) in opened where payload?.kind == .buddyDisconnect {
                if let sender = payload?.sender?.userID { disconnectedAt[sender] = max(disconnectedAt[sender] ?? .distantPast, sentAt) }
            }
            for (named, payload, sentAt) in opened {
                let claimed = try await tx.sql.raw(
                    """
                    DELETE FROM \(unsafeRaw: NamedMessage.schema) WHERE id = \(bind: named.requireID()) RETURNING id
                    """
                ).first()
                guard claimed != nil, let payload else { continue }
                if payload.kind != .buddyDisconnect, let sender = payload.sender?.userID, let gone = disconnectedAt[sender], sentAt <= gone {
                    continue
                }
                if try await MessageService(db: tx).isWithdrawn(payload) { continue }
                current = try await apply(payload, to: current, on: tx)
                try await MessageWriter.deliver(to: current.privateData.userAnonymizedID, on: tx, now: sentAt) { id in
                    var moved = payload
                    moved.messageID = id
                    moved.sentAt = nil
                    return moved
                }
            }
            return current
        }
    }

    /// Drops buddies whose account vanished without a word (a lost-phone overwrite cannot tell them: the
    /// old account's buddy list was sealed under the lost password). Each gets a `BuddyDisconnectMessage`
    /// (`USER_ACCOUNT_DELETED`) in the user's own inbox. Runs on each authenticated call, after the named inbox.
    package func dropVanishedBuddies(_ user: UnlockedUser) async throws -> UnlockedUser {
        let ids = user.privateData.buddies.map(\.userID)
        guard !ids.isEmpty else { return user }
        // Raw SQL: this runs on every authenticated call.
        let existing = Set(
            try await db.sql.raw("SELECT id FROM \(unsafeRaw: User.schema) WHERE id IN (\(binds: ids))").all()
                .map { try $0.decode(column: "id", as: UUID.self) })
        let vanished = user.privateData.buddies.filter { !existing.contains($0.userID) }
        guard !vanished.isEmpty else { return user }
        let now = Date()
        let me = user.privateData.userAnonymizedID
        return try await db.transaction { tx in
            // Only the call whose write removed them tells the user (the app sends several calls at once).
            let gone = Set(vanished.map(\.id))
            var removed: [PrivateBuddy] = []
            let updated = try await users.modifyPrivateData(user, on: tx) { data in
                removed = data.buddies.filter { gone.contains($0.id) }
                data.buddies.removeAll { gone.contains($0.id) }
            }
            for buddy in removed {
                try await BuddyAnonymized.query(on: tx).filter(\.$id == buddy.buddyAnonymizedID).delete()
                if let other = buddy.buddyUserAnonymizedID { try await MessageWriter.deleteAll(from: other, in: me, on: tx) }
                let sender = MessagePayload.Sender(
                    userID: buddy.userID, firstName: buddy.firstName, lastName: buddy.lastName,
                    nickname: buddy.nickname, mobileNumber: buddy.mobileNumber)
                var typedNames = sender
                typedNames.nickname = "\(buddy.firstName) \(buddy.lastName)"
                try await MessageWriter.deliver(to: me, on: tx, now: now) { id in
                    // Yona: an invitee who never answered is a rejection under the names the user typed; a buddy a
                    // disconnect.
                    buddy.sendingStatus == .accepted
                        ? MessagePayload(
                            kind: .buddyDisconnect, messageID: id,
                            subjectUserAnonymizedID: buddy.buddyUserAnonymizedID ?? buddy.buddyAnonymizedID,
                            sender: sender, reason: "USER_ACCOUNT_DELETED")
                        : MessagePayload(
                            kind: .buddyConnectResponse, messageID: id, subjectUserAnonymizedID: buddy.buddyAnonymizedID,
                            status: Status.rejected.rawValue, sender: typedNames, reason: "USER_ACCOUNT_DELETED")
                }
            }
            return updated
        }
    }

    private func apply(_ payload: MessagePayload, to user: UnlockedUser, on tx: any Database) async throws -> UnlockedUser {
        switch payload.kind {
        case .buddyConnectResponse:
            guard let buddyID = payload.buddyID, let buddy = user.privateData.buddies.first(where: { $0.id == buddyID }) else { return user }
            if payload.status == Status.accepted.rawValue {
                return try await users.modifyPrivateData(user, on: tx) { data in
                    guard let index = data.buddies.firstIndex(where: { $0.id == buddyID }) else { return }
                    data.buddies[index].sendingStatus = .accepted
                    data.buddies[index].receivingStatus = .accepted
                    data.buddies[index].buddyUserAnonymizedID = payload.subjectUserAnonymizedID
                    if let sender = payload.sender {
                        // The buddy's own names replace the ones the requester typed (as Yona).
                        data.buddies[index].takeNames(from: sender)
                    }
                    data.buddies[index].deviceNames = payload.deviceNames
                    data.buddies[index].deviceAnonymizedIDs = payload.deviceAnonymizedIDs
                    data.buddies[index].lastStatusChangeTime = Date()
                }
            }
            try await BuddyAnonymized.query(on: tx).filter(\.$id == buddy.buddyAnonymizedID).delete()
            return try await users.modifyPrivateData(user, on: tx) { $0.buddies.removeAll { $0.id == buddyID } }
        case .buddyDeviceChange:
            guard let sender = payload.sender, user.privateData.buddies.contains(where: { $0.userID == sender.userID }) else { return user }
            return try await users.modifyPrivateData(user, on: tx) { data in
                guard let index = data.buddies.firstIndex(where: { $0.userID == sender.userID }) else { return }
                data.buddies[index].deviceNames = payload.deviceNames
                data.buddies[index].deviceAnonymizedIDs = payload.deviceAnonymizedIDs
            }
        case .buddyInfoChange:
            guard let sender = payload.sender, user.privateData.buddies.contains(where: { $0.userID == sender.userID }) else { return user }
            return try await users.modifyPrivateData(user, on: tx) { data in
                guard let index = data.buddies.firstIndex(where: { $0.userID == sender.userID }) else { return }
                data.buddies[index].takeNames(from: sender)
            }
        case .buddyDisconnect:
            let gone = user.privateData.buddies.filter {
                $0.buddyUserAnonymizedID == payload.subjectUserAnonymizedID || $0.userID == payload.sender?.userID
            }
            guard !gone.isEmpty else { return user }
            try await BuddyAnonymized.query(on: tx).filter(\.$id ~~ gone.map(\.buddyAnonymizedID)).delete()
            return try await users.modifyPrivateData(user, on: tx) { data in
                data.buddies.removeAll { buddy in gone.contains { $0.id == buddy.id } }
            }
        default:
            return user
        }
    }

    // MARK: - disclosure

    /// A buddy asks the subject of a goal conflict to show the URL.
    package func requestDisclosure(_ user: UnlockedUser, of copy: OpenedMessage, text: String? = nil) async throws {
        var payload = copy.payload
        guard payload.kind == .goalConflict, payload.subjectUserAnonymizedID != user.privateData.userAnonymizedID,
            payload.status == "ANNOUNCED", let original = payload.originalMessageID
        else {
            throw YonaError(.messageActionNotSupported)
        }
        payload.status = "DISCLOSURE_REQUESTED"
        let requested = payload
        try await db.transaction { tx in
            try await MessageWriter.transition(
                copy, recipient: user.privateData.userAnonymizedID, inbox: try user.anonymousInbox(), on: tx, requested)
            try await MessageWriter.deliver(to: requested.subjectUserAnonymizedID, on: tx, now: Date()) { id in
                MessagePayload(
                    kind: .disclosureRequest, messageID: id, subjectUserAnonymizedID: user.privateData.userAnonymizedID,
                    activityCategoryID: requested.activityCategoryID, goalID: requested.goalID, activityStartTime: requested.activityStartTime,
                    activityEndTime: requested.activityEndTime, status: "DISCLOSURE_REQUESTED", text: text,
                    originalMessageID: original, buddyCopyMessageID: copy.id)
            }
        }
    }

    /// The subject answers a disclosure request; on accept the buddy's copy shows the URL from then on.
    package func answerDisclosure(
        _ user: UnlockedUser, request: OpenedMessage, accept: Bool, text: String? = nil,
        messages: MessageService
    ) async throws {
        var payload = request.payload
        guard payload.kind == .disclosureRequest, payload.status == "DISCLOSURE_REQUESTED",
            let originalID = payload.originalMessageID, let copyID = payload.buddyCopyMessageID
        else {
            throw YonaError(.messageActionNotSupported)
        }
        let original = try await messages.message(originalID, of: user).payload
        let buddy = payload.subjectUserAnonymizedID
        let status = accept ? "DISCLOSURE_ACCEPTED" : "DISCLOSURE_REJECTED"
        payload.status = status
        let answered = payload
        try await db.transaction { tx in
            try await MessageWriter.transition(
                request, recipient: user.privateData.userAnonymizedID, inbox: try user.anonymousInbox(), on: tx, answered)
            var copy = original
            copy.url = accept ? original.url : nil
            copy.status = status
            copy.originalMessageID = originalID
            try await MessageWriter.reseal(copyID, recipient: buddy, on: tx, copy)
            try await MessageWriter.deliver(to: buddy, on: tx, now: Date()) { id in
                MessagePayload(
                    kind: .disclosureResponse, messageID: id, subjectUserAnonymizedID: user.privateData.userAnonymizedID,
                    activityCategoryID: original.activityCategoryID, goalID: original.goalID, activityStartTime: original.activityStartTime,
                    activityEndTime: original.activityEndTime, status: status, text: text,
                    originalMessageID: originalID, buddyCopyMessageID: copyID)
            }
        }
    }

    /// Tells every buddy the user shares with about a change (goals, device names), in the caller's transaction.
    package static func announce(_ user: UnlockedUser, on db: any Database, _ makePayload: (Int64) -> MessagePayload) async throws {
        let now = Date()
        for buddy in user.privateData.buddies where buddy.sendingStatus == .accepted {
            guard let recipient = buddy.buddyUserAnonymizedID else { continue }
            try await MessageWriter.deliver(to: recipient, on: db, now: now, makePayload)
        }
    }

    /// Tells every accepted buddy's identity about a change of the user's devices, through the buddy's named
    /// inbox: the buddy's own buddy list (which keeps the device names its buddy view shows) is sealed under
    /// the buddy's key, so only the buddy's next call can update it. The message then moves to the anonymous
    /// inbox like any direct message (and is pushed then).
    package static func announceDevices(
        _ user: UnlockedUser, on db: any Database,
        change: String, oldName: String?, newName: String?
    ) async throws {
        let now = Date()
        for buddy in user.privateData.buddies where buddy.sendingStatus == .accepted {
            try await MessageWriter.deliverNamed(
                to: buddy.userID, on: db, now: now,
                MessagePayload(
                    kind: .buddyDeviceChange, messageID: 0, subjectUserAnonymizedID: user.privateData.userAnonymizedID,
                    sender: sender(user), change: change, oldName: oldName, newName: newName,
                    deviceNames: user.privateData.devices.map(\.name),
                    deviceAnonymizedIDs: user.privateData.devices.map(\.deviceAnonymizedID)))
        }
    }

    /// Tells every accepted buddy's identity that the user's names or nickname changed (Yona's
    /// `BuddyInfoChangeMessage`), through the named inbox so the buddy's own list can take the new names.
    package static func announceInfoChange(_ user: UnlockedUser, on db: any Database) async throws {
        let now = Date()
        for buddy in user.privateData.buddies where buddy.sendingStatus == .accepted {
            try await MessageWriter.deliverNamed(
                to: buddy.userID, on: db, now: now,
                MessagePayload(
                    kind: .buddyInfoChange, messageID: 0, subjectUserAnonymizedID: user.privateData.userAnonymizedID, sender: sender(user)))
        }
    }

    package static func sender(_ user: UnlockedUser) -> MessagePayload.Sender {
        MessagePayload.Sender(
            userID: user.id, firstName: user.privateData.firstName, lastName: user.privateData.lastName,
            nickname: user.privateData.nickname, mobileNumber: user.mobileNumber, photoID: user.privateData.photoID)
    }

    package init(db: any Database, users: UserService) {
        self.db = db
        self.users = users
    }
}
