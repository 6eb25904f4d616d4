import Fluent
import Foundation
import SQLKit
import Testing

@testable import YonaAPI
@testable import YonaDelivery
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// privacy.md "The split store": a full copy of the database, without passwords, must not tell who anyone
/// is beyond the mobile number, nor join a number to its anonymized part.
@Suite struct DatabaseDumpTests {
    struct Created {
        let user: TestUser
        let lastName: String
        let instanceID: String
        let userAnonymizedID: String
    }

    @Test(arguments: TestDatabase.available)
    func dumpRevealsNoNamesPasswordsOrJoinPath(db: TestDatabase) async throws {
        // VPN accounts go to a directory that is not there, so their changes wait in the outbox and are in the dump.
        let noDirectory = LDAPSettings(url: "ldap://127.0.0.1:9/", baseDN: "dc=x", bindDN: "cn=x,dc=x", bindPassword: "x")
        try await withServer(db, adjust: { $0.vpnAccounts = noDirectory }) { server in
            // setup: users with names nobody else would have
            var created: [Created] = []
            var vpnPasswords: [String] = []
            var photos: [(id: String, png: Data)] = []
            var otps: [String] = []
            var urls: [String] = []
            for index in 0..<3 {
                let marker = "Qx\(index)\(UInt32.random(in: 100_000...999_999))"
                let instanceID = "fiid-\(marker)-token"
                let user = try await server.createUser(
                    firstName: "Zebediah\(marker)", nickname: "Zed\(marker)",
                    extra: [
                        "lastName": "Quartermain\(marker)", "deviceName": "Phone", "deviceOperatingSystem": "ANDROID",
                        "deviceAppVersion": "1.0", "deviceAppVersionCode": 7, "deviceFirebaseInstanceId": instanceID,
                    ])
                let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
                let vpnLogin = try #require(
                    value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0, "vpnProfile", "vpnLoginID") as? String)
                let anonymizedID = try #require(vpnLogin.split(separator: "$").first.map(String.init))
                vpnPasswords.append(
                    try #require(
                        value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0, "vpnProfile", "vpnPassword") as? String))
                // a profile photo with a text chunk, as stored (re-encoded) and as linked
                let photoLink = try await YonaUserPhotoFeatureTests.upload(server, user, "with-text.png")
                photos.append((try #require(photoLink.split(separator: "/").last.map(String.init)), try await server.request(.GET, photoLink).body))
                created.append(Created(user: user, lastName: "Quartermain\(marker)", instanceID: instanceID, userAnonymizedID: anonymizedID))
                // a pending new-device request, so its table is part of the dump too
                let otp = "Ot\(marker)"
                let set = try await server.request(
                    .PUT, NewDeviceRequestTests.requestPath(user.mobileNumber), headers: user.passwordHeader,
                    json: ["newDeviceRequestPassword": otp])
                try #require(set.status == 204)
                otps.append(otp)
                // a danger-zone visit, so the dump holds a sealed goal conflict with a distinctive URL
                try await server.addNoGoGoal(user, category: GoalsTests.gambling)
                let url = "https://poker-\(marker).example/table"
                #expect(
                    try await server.postNetworkActivity(
                        anonymizedID, categories: ["gambling"], url: url,
                        at: Date().addingTimeInterval(-60)
                    ).status == 204)
                #expect(try await server.messages(user).first?["url"] as? String == url)
                urls.append(url)
            }

            // an invited number that has no account yet: the inviter's names for it and the link's temporary password
            let inviteeFirst = "Invitee\(UInt32.random(in: 100_000...999_999))"
            let invited = try await server.request(
                .POST, "\(created[0].user.path)/buddies/", headers: created[0].user.passwordHeader,
                json: [
                    "_embedded": [
                        "yona:user": [
                            "firstName": inviteeFirst, "lastName": "Lastname\(inviteeFirst)", "mobileNumber": randomMobileNumber(),
                            "emailAddress": "\(inviteeFirst)@example.com",
                        ]
                    ],
                    "message": "Buddy note \(inviteeFirst)", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            try #require(invited.status == 201, "\(invited.text)")
            let mail = try await server.request(.GET, "/test/emails/last")
            let mailBody = try #require(mail.json["body"] as? String)
            let passwordStart = try #require(mailBody.range(of: "tempPassword=")).upperBound
            let temporaryPassword = String(mailBody[passwordStart...].prefix { $0 != "\"" })
            try #require(!temporaryPassword.isEmpty)
            // the invited account's Yona password, which its invitation link shows (sealed under the link's secret)
            let linkStart = try #require(mailBody.range(of: "click <a href=\"")).upperBound
            let link = String(mailBody[linkStart...].prefix { $0 != "\"" })
            let invitedPassword = try #require(try await server.request(.GET, link).json["yonaPassword"] as? String)

            // act: take the dump an attacker would take
            let dump = try await Self.dump(server)

            // check: the dump is real (it holds the numbers) and holds none of the secrets
            #expect(dump.count > 1000)
            for item in created {
                #expect(dump.range(of: Data(item.user.mobileNumber.utf8)) != nil, "the dump should contain the (allowed) numbers")
                for secret in [item.user.firstName, item.lastName, item.user.nickname, item.user.password] {
                    #expect(dump.range(of: Data(secret.utf8)) == nil, "found a personal value in the \(db) dump")
                }
            }

            for otp in otps { #expect(dump.range(of: Data(otp.utf8)) == nil, "a one-time password is in the dump") }
            for secret in [
                inviteeFirst, "Lastname\(inviteeFirst)", "\(inviteeFirst)@example.com", "Buddy note \(inviteeFirst)", temporaryPassword,
                invitedPassword, String(invitedPassword.dropFirst(YonaPassword.wireMarker.count)),
            ] {
                #expect(dump.range(of: Data(secret.utf8)) == nil, "an invitee's name, address, note or temporary password is in the dump")
            }
            for url in urls { #expect(dump.range(of: Data(url.utf8)) == nil, "a visited URL is in the dump") }
            // the VPN account changes wait in the outbox (sealed), and no VPN password is readable
            #expect(try await PendingVPNAccountChange.query(on: server.app.db).count() == 3)
            for password in vpnPasswords { #expect(dump.range(of: Data(password.utf8)) == nil, "a VPN password is in the dump") }
            #expect(dump.range(of: Data("{SSHA}".utf8)) == nil, "a VPN password hash is in the dump")
            // no photo and no photo id, raw or as pg_dump's hex
            func hex(_ data: Data) -> Data { Data(data.map { String(format: "%02x", $0) }.joined().utf8) }
            for photo in photos {
                let pixels = photo.png.subdata(in: 8..<min(photo.png.count, 48))
                for needle in [Data(photo.id.utf8), Data(photo.id.replacingOccurrences(of: "-", with: "").utf8), pixels, hex(pixels)] {
                    #expect(dump.range(of: needle) == nil, "a photo or its id is in the dump")
                }
            }
            #expect(dump.range(of: Data("secret-home-address".utf8)) == nil)
            for host in urls.compactMap({ URL(string: $0)?.host }) {
                #expect(dump.range(of: Data(host.utf8)) == nil, "a visited host is in the dump")
            }

            // check: the identity side holds no anonymized id and no Instance ID in any encoding
            let identityRows =
                try await allCells(of: User.schema, in: server.app.db)
                + (try await allCells(of: NewDeviceRequest.schema, in: server.app.db))
            #expect(identityRows.count >= 3 * 7 + 3 * 6, "every non-null cell of both identity tables was read")
            for item in created {
                let uuid = try #require(UUID(uuidString: item.userAnonymizedID))
                let needles: [Data] = [
                    Data(item.userAnonymizedID.lowercased().utf8), Data(item.userAnonymizedID.uppercased().utf8),
                    Data(item.userAnonymizedID.replacingOccurrences(of: "-", with: "").utf8), Data(uuid.bytes),
                    Data(item.instanceID.utf8),
                ]
                for cell in identityRows {
                    for needle in needles { #expect(cell.range(of: needle) == nil, "identity side points at the anonymized side") }
                }
                if server.database == .postgres {
                    let usersBlock = try #require(copyBlock(of: "users", in: dump))
                    #expect(!usersBlock.contains(item.userAnonymizedID.lowercased()))
                    #expect(copyBlock(of: "devices_anonymized", in: dump)?.contains(item.instanceID) == true)
                }
            }
        }
    }

    /// privacy.md: no join by timestamp. An inviter invites a new number (its account is made, its buddy request
    /// waits in its named inbox), the invitee takes the account over, confirms and accepts, the inviter reads the
    /// answer, and the inviter's visit raises a conflict for both. After each step no instant stored on the identity
    /// side equals, to the millisecond, one stored anywhere on the anonymized side. Days (midnight UTC: `invited_on`)
    /// are what the threat model accepts and are left out.
    @Test(arguments: TestDatabase.available)
    func noInstantOfAnInvitedNumberMatchesOneOnTheAnonymizedSide(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let sql = server.app.db as! any SQLDatabase
            let identity: Set<String> = [User.schema, NamedMessage.schema, NewDeviceRequest.schema, PendingText.schema]
            // Shared reference data, and counters under a key only the server's secret opens.
            let neither: Set<String> = ["_fluent_migrations", ActivityCategory.schema, "rate_limit_counters"]
            // Every stored instant after 2020 (the mandatory goal's 2017 date and small numbers are not instants), in ms.
            let since2020 = Date(timeIntervalSince1970: 1_577_836_800)
            func instants(_ table: String) async throws -> [Int64: String] {
                var found: [Int64: String] = [:]
                for row in try await sql.raw("SELECT * FROM \(ident: table)").all() {
                    for column in row.allColumns {
                        let date =
                            (try? row.decode(column: column, as: Date.self))
                            ?? (try? row.decode(column: column, as: Double.self)).map { Date(timeIntervalSince1970: $0) }
                        guard let date, date > since2020, date < Date().addingTimeInterval(86_400) else { continue }
                        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
                        guard milliseconds % 86_400_000 != 0 else { continue }
                        found[milliseconds] = "\(table).\(column)"
                    }
                }
                return found
            }
            var seen: Set<String> = []
            func check(_ step: String) async throws {
                let tables = try await sql.raw(
                    server.database == .sqlite
                        ? "SELECT name AS t FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                        : "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'"
                ).all().map { try $0.decode(column: "t", as: String.self) }
                try #require(identity.isSubset(of: Set(tables)) && tables.count > 15, "\(tables)")
                var identitySide: [Int64: String] = [:]
                var anonymizedSide: [Int64: String] = [:]
                for table in tables where !neither.contains(table) {
                    let found = try await instants(table)
                    if identity.contains(table) {
                        identitySide.merge(found) { $1 }
                    } else {
                        anonymizedSide.merge(found) { $1 }
                    }
                }
                seen.formUnion(identitySide.values)
                seen.formUnion(anonymizedSide.values)
                for (instant, place) in identitySide {
                    #expect(anonymizedSide[instant] == nil, "\(step): \(place) equals \(anonymizedSide[instant] ?? "") at \(instant) ms")
                }
            }

            let inviter = try await server.createUser(extra: BuddyTests.phone("fiid-inviter-\(UUID().uuidString)"))
            try await server.addNoGoGoal(inviter, category: GoalsTests.gambling)
            let number = randomMobileNumber()
            let link = try await InvitationTests.invite(server, richard: inviter, number: number)
            #expect(try await NamedMessage.query(on: server.app.db).count() == 1, "the request waits in the named inbox")
            try await check("invited")
            let opened = try await server.request(.GET, link)
            let password = try #require(opened.json["yonaPassword"] as? String)
            let edit = try #require(value(opened.json, "_links", "edit", "href") as? String)
            let taken = try await server.request(
                .PUT, edit, headers: [("Yona-Password", password)], json: InvitationTests.takeOverBody(number: number))
            try #require(taken.status == 200, "\(taken.text)")
            try await check("taken over")
            let invitee = TestUser(
                id: String(URLComponents(string: link)!.path.split(separator: "/").last!), password: password, mobileNumber: number,
                firstName: "Bob", nickname: "BD")
            let confirmed = try await server.request(
                .POST, "\(invitee.path)/confirmMobileNumber", headers: invitee.passwordHeader, json: ["code": "1234"])
            try #require(confirmed.status == 200, "\(confirmed.text)")
            let request = try #require(try await server.messages(invitee).first { $0["@type"] as? String == "BuddyConnectRequestMessage" })
            try await check("request moved")
            let accept = try #require(value(request, "_links", "yona:accept", "href") as? String)
            let accepted = try await server.request(.POST, accept, headers: invitee.passwordHeader, json: ["properties": ["message": "Yes"]])
            try #require(accepted.status == 200, "\(accepted.text)")
            try await check("accepted")
            _ = try await server.messages(inviter)
            let (anonymizedID, _) = try await server.vpnLogin(inviter)
            #expect(try await server.postNetworkActivity(anonymizedID, categories: ["gambling"], url: "https://poker.example/").status == 204)
            _ = try await server.messages(invitee)
            try await check("conflict")
            #expect(seen.contains("\(Message.schema).creation_time"), "\(seen)")
            #expect(!seen.contains("\(NamedMessage.schema).created_at"), "a named message is dated by its day only")
        }
    }

    /// What an attacker who copies the database gets: SQLite's files (the log checkpointed first), or `pg_dump`'s
    /// text (binary columns appear there as hex).
    static func dump(_ server: TestServer) async throws -> Data {
        switch server.database {
        case .sqlite:
            try await (server.app.db as! any SQLDatabase).raw("PRAGMA wal_checkpoint(FULL)").run()
            return ["", "-wal", "-journal"].compactMap { FileManager.default.contents(atPath: server.databaseLocation + $0) }
                .reduce(Data(), +)
        case .postgres:
            return try PostgresAdmin.dump(server.databaseLocation)
        }
    }

    /// Every cell of a table as bytes, whatever its SQL type.
    private func allCells(of table: String, in db: any Database) async throws -> [Data] {
        let rows = try await (db as! any SQLDatabase).raw("SELECT * FROM \(ident: table)").all()
        return rows.flatMap { row in
            row.allColumns.compactMap { column -> Data? in
                if let data = try? row.decode(column: column, as: Data.self) { return data }
                if let text = try? row.decode(column: column, as: String.self) { return Data(text.utf8) }
                if let uuid = try? row.decode(column: column, as: UUID.self) { return Data(uuid.uuidString.utf8) }
                if let number = try? row.decode(column: column, as: Int.self) { return Data(String(number).utf8) }
                if let flag = try? row.decode(column: column, as: Bool.self) { return Data(String(flag).utf8) }
                return nil
            }
        }
    }

    /// The data lines of one table in a pg_dump.
    private func copyBlock(of table: String, in dump: Data) -> String? {
        let text = String(decoding: dump, as: UTF8.self)
        guard let start = text.range(of: "COPY public.\(table) ") else { return nil }
        let rest = text[start.upperBound...]
        let end = rest.range(of: "\n\\.\n")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }
}
