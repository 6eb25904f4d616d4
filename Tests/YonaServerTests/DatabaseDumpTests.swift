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
