import Fluent
import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// Yona's `UserPhotoTest`: upload (PNG, GIF, JPEG, BMP, all served back as PNG), the 128 KB limit, download
/// without a password, replace and delete (the old photo still downloads), the photo on the buddy's user and in
/// `BuddyInfoChangeMessage`, the wrong-password attempts; and what Yona did not do: metadata (EXIF GPS, PNG text)
/// stripped, undecodable or oversized pictures refused, no photo readable from a dump, retired photos purged.
@Suite struct YonaUserPhotoFeatureTests {
    static let boundary = "TheBoundary"

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures/photos")))
    }

    /// Yona's `createMultipartEntity`: one `file` part.
    static func multipart(_ bytes: Data, type: String, filename: String, boundary: String = boundary) -> Data {
        var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(filename)\"\r\n".utf8)
        body += Data("Content-Type: \(type)\r\n\r\n".utf8) + bytes + Data("\r\n--\(boundary)--\r\n".utf8)
        return body
    }

    static func put(_ server: TestServer, _ user: TestUser, _ bytes: Data, type: String = "image/png", password: String? = nil) async throws
        -> APIResponse
    {
        try await server.request(
            .PUT, "\(user.path)/photo", headers: [("Yona-Password", password ?? user.password)],
            body: multipart(bytes, type: type, filename: "MyPhoto"), contentType: "multipart/form-data; boundary=\(boundary)")
    }

    /// Yona's iOS app (`Manager.makeFileUpload`/`multipartDataFromFile`) uploads with a boundary that itself begins
    /// and ends with dashes, the part typed `image/*` and named `file.png`: the photo is taken as any other.
    @Test(arguments: TestDatabase.available)
    func theIOSAppsOwnUploadIsTaken(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(firstName: "Richard", nickname: "RQ")
            let appBoundary = "--gc0p4Jq0M2Yt08jU534c0p--"
            let answer = try await server.request(
                .PUT, "\(richard.path)/photo", headers: richard.passwordHeader,
                body: Self.multipart(try Self.fixture("small.png"), type: "image/*", filename: "file.png", boundary: appBoundary),
                contentType: "multipart/form-data; boundary=\(appBoundary)")
            #expect(answer.status == 200, "\(answer.text)")
            let link = try #require(value(answer.json, "_links", "yona:userPhoto", "href") as? String)
            let photo = try await server.request(.GET, link)
            #expect(photo.status == 200 && photo.headers.first(name: "Content-Type") == "image/png")
        }
    }

    /// `uploadUserPhoto`: the new photo's link.
    static func upload(_ server: TestServer, _ user: TestUser, _ name: String = "small.png") async throws -> String {
        let answer = try await put(server, user, try fixture(name))
        try #require(answer.status == 200, "\(answer.text)")
        return try #require(value(answer.json, "_links", "yona:userPhoto", "href") as? String)
    }

    static func photoLink(_ server: TestServer, _ user: TestUser) async throws -> String? {
        let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
        return value(profile.json, "_links", "yona:userPhoto", "href") as? String
    }

    static func buddyPhotoLink(_ server: TestServer, _ user: TestUser) async throws -> String? {
        value(try await YonaBuddyFeatureTests.buddyEntry(server, user), "_embedded", "yona:user", "_links", "yona:userPhoto", "href") as? String
    }

    /// Width and height from a PNG's IHDR.
    static func pngSize(_ data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data)
        guard bytes.count > 24, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { return nil }
        func int(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (int(16), int(20))
    }

    @Test(arguments: TestDatabase.available)
    func richardUploadsHisPhotoTheNewURLIsReturnedAndSetOnTheUser(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let answer = try await Self.put(server, richard, try Self.fixture("small.png"))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.headers.first(name: "Content-Type") == "application/json")
            let link = try #require(value(answer.json, "_links", "yona:userPhoto", "href") as? String)
            #expect(try await Self.photoLink(server, richard) == link)
            // 'The photo of Richard can be downloaded': no password needed
            let download = try await server.request(.GET, link)
            #expect(download.status == 200 && download.headers.first(name: "Content-Type") == "image/png")
            #expect(Self.pngSize(download.body).map { [$0.0, $0.1] } == [24, 20])
        }
    }

    @Test(arguments: ["small.gif", "with-gps.jpg", "small.bmp"])
    func richardUploadsHisPhotoInAnotherFormatItIsConvertedToPNG(fixture: String) async throws {
        try await withServer(.sqlite) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let link = try await Self.upload(server, richard, fixture)
            let download = try await server.request(.GET, link)
            #expect(download.status == 200 && download.headers.first(name: "Content-Type") == "image/png")
            #expect(Self.pngSize(download.body).map { [$0.0, $0.1] } == [24, 20])
        }
    }

    @Test func metadataDoesNotSurviveTheUpload() async throws {
        try await withServer(.sqlite) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let jpeg = try Self.fixture("with-gps.jpg")
            // the fixture is what a phone sends: EXIF with a camera and a GPS position
            #expect(jpeg.range(of: Data("Exif".utf8)) != nil && jpeg.range(of: Data("SecretCamMaker".utf8)) != nil)
            let fromJPEG = try await server.request(.GET, try await Self.upload(server, richard, "with-gps.jpg")).body
            for marker in ["Exif", "SecretCamMaker", "SecretCamModel", "GPS"] {
                #expect(fromJPEG.range(of: Data(marker.utf8)) == nil, "\(marker) survived")
            }
            let textPNG = try Self.fixture("with-text.png")
            #expect(textPNG.range(of: Data("secret-home-address".utf8)) != nil)
            let fromPNG = try await server.request(.GET, try await Self.upload(server, richard, "with-text.png")).body
            #expect(fromPNG.range(of: Data("secret-home-address".utf8)) == nil)
            #expect(fromPNG.range(of: Data("tEXt".utf8)) == nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func tooLargeBrokenAndHostilePicturesAreRefused(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            // 'Richard uploads a photo that is too large; returns HTTP 413'
            var large = try Self.fixture("small.png")
            large += Data((0..<(130 * 1024)).map { _ in UInt8.random(in: 0...255) })
            #expect(try await Self.put(server, richard, large).status == 413)
            // a few bytes over the limit, still inside the request's framing allowance
            let justOver = Data(repeating: 0x41, count: PhotoImage.maxBytes + 1)
            #expect(try await Self.put(server, richard, justOver).status == 413)

            // a 100 KB PNG may declare a picture that takes gigabytes once decoded: refused before decoding
            var bomb = [UInt8](try Self.fixture("small.png"))
            bomb.replaceSubrange(16..<24, with: [0x00, 0x00, 0x9C, 0x40, 0x00, 0x00, 0x9C, 0x40]) // 40000 x 40000
            for (bytes, what) in [
                (Data(bomb), "declared 40000x40000"), (try Self.fixture("small.png").prefix(40), "truncated PNG"),
                (Data("<svg xmlns='http://www.w3.org/2000/svg'/>".utf8), "SVG"), (Data("just text".utf8), "text"),
                (Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x02]), "JPEG header only"),
            ] {
                let answer = try await Self.put(server, richard, bytes)
                #expect(answer.status == 400 && answer.errorCode == "error.user.photo.invalid.file.type", "\(what): \(answer.text)")
            }
            // no file part, and not multipart at all
            let noFile = try await server.request(
                .PUT, "\(richard.path)/photo", headers: richard.passwordHeader, body: Data("--\(Self.boundary)--\r\n".utf8),
                contentType: "multipart/form-data; boundary=\(Self.boundary)")
            #expect(noFile.status == 400, "\(noFile.text)")
            let json = try await server.request(.PUT, "\(richard.path)/photo", headers: richard.passwordHeader, json: ["file": "x"])
            #expect(json.status == 415, "\(json.text)")
            // nothing of it became Richard's photo
            #expect(try await Self.photoLink(server, richard) == nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func richardUpdatesThenDeletesHisPhotoTheOldOnesStillDownloadButAreNotLinked(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let before = try await Self.upload(server, richard)
            let after = try await Self.upload(server, richard, "small.gif")
            #expect(after != before)
            #expect(try await Self.photoLink(server, richard) == after)
            #expect(try await server.request(.GET, before).status == 200)
            #expect(try await server.request(.GET, after).status == 200)

            let deleted = try await server.request(.DELETE, "\(richard.path)/photo", headers: richard.passwordHeader)
            #expect(deleted.status == 204)
            #expect(try await Self.photoLink(server, richard) == nil)
            #expect(try await server.request(.GET, after).status == 200)

            // the retention period of retired photos ends: they are purged and answer 404
            try await UserPhotoRecord.query(on: server.app.db).filter(\.$expiresOn != nil).set(\.$expiresOn, to: "2000-01-01").update()
            try await UserPhotoService.purgeExpired(on: server.app.db)
            let gone = try await server.request(.GET, after)
            #expect(gone.status == 404 && gone.errorCode == "error.user.photo.not.found.id")
            let unknown = try await server.request(.GET, "/userPhotos/\(UUID().uuidString.lowercased())")
            #expect(unknown.status == 404 && unknown.errorCode == "error.user.photo.not.found.id")
        }
    }

    @Test(arguments: TestDatabase.available)
    func hackingAttemptsWithAWrongPasswordChangeNothing(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let put = try await Self.put(server, richard, try Self.fixture("small.png"), password: "Wrong password")
            #expect(put.status == 400 && put.errorCode == "error.decrypting.data", "\(put.text)")
            #expect(try await Self.photoLink(server, richard) == nil)
            let link = try await Self.upload(server, richard)
            let delete = try await server.request(.DELETE, "\(richard.path)/photo", headers: [("Yona-Password", "Wrong password")])
            #expect(delete.status == 400 && delete.errorCode == "error.decrypting.data", "\(delete.text)")
            #expect(try await Self.photoLink(server, richard) == link)
        }
    }

    @Test(arguments: TestDatabase.available)
    func richardsPhotoLinkIsStillAvailableAfterHeUpdatedHisNickname(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let link = try await Self.upload(server, richard)
            let profile = try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader)
            let edit = try #require(value(profile.json, "_links", "edit", "href") as? String)
            // Yona's test client sends `Accept: application/json` and reads the answer as such
            let updated = try await server.request(
                .PUT, edit, headers: richard.passwordHeader + [("Accept", "application/json")],
                json: [
                    "firstName": profile.json["firstName"] as Any, "lastName": profile.json["lastName"] as Any, "nickname": "NewNickName",
                    "mobileNumber": richard.mobileNumber, "yonaPassword": richard.password,
                ])
            #expect(updated.status == 200, "\(updated.text)")
            #expect(updated.headers.first(name: "Content-Type") == "application/json")
            #expect(value(updated.json, "_links", "yona:userPhoto", "href") as? String == link)
            // without that Accept the same document is HAL's media type (api.md)
            let asHAL = try await server.request(
                .GET, richard.profilePath, headers: richard.passwordHeader + [("Accept", "application/hal+json, application/json")])
            #expect(asHAL.headers.first(name: "Content-Type") == "application/hal+json")
            let plain = try await server.request(.GET, richard.profilePath, headers: richard.passwordHeader)
            #expect(plain.headers.first(name: "Content-Type") == "application/hal+json")
            #expect(try await Self.photoLink(server, richard) == link)
        }
    }

    @Test(arguments: TestDatabase.available)
    func richardAndBobSeeEachOthersPhotosAfterBecomingBuddies(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let richardsPhoto = try await Self.upload(server, richard)
            let bob = try await server.createUser(nickname: "BD")
            let bobsPhoto = try await Self.upload(server, bob, "small.gif")
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            _ = try await server.messages(richard)
            #expect(try await Self.buddyPhotoLink(server, richard) == bobsPhoto)
            #expect(try await Self.buddyPhotoLink(server, bob) == richardsPhoto)
            // 'Bob can see the photo of Richard on the messages of Richard'
            let fromRichard = try await server.messages(bob).filter { $0["nickname"] as? String == "RQ" }
            #expect(!fromRichard.isEmpty)
            #expect(fromRichard.allSatisfy { value($0, "_links", "yona:userPhoto", "href") as? String == richardsPhoto })
            // 'Richard is deleted; Bob can still see the photo of Richard on the messages of Richard'
            #expect(try await server.request(.DELETE, richard.path, headers: richard.passwordHeader).status == 204)
            #expect(try await server.request(.GET, richardsPhoto).status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func richardAddsUpdatesAndDeletesHisPhotoBobGetsABuddyInfoChangeMessageEachTime(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let bob = try await server.createUser(nickname: "BD")
            try await BuddyTests.connect(server, richard: richard, bob: bob)
            _ = try await server.messages(richard)
            let buddyURL = try #require(value(try await YonaBuddyFeatureTests.buddyEntry(server, bob), "_links", "self", "href") as? String)

            var expectedCount = 0
            for step in ["add", "update", "delete"] {
                let link: String?
                if step == "delete" {
                    #expect(try await server.request(.DELETE, "\(richard.path)/photo", headers: richard.passwordHeader).status == 204)
                    link = nil
                } else {
                    link = try await Self.upload(server, richard, step == "add" ? "small.png" : "small.gif")
                }
                expectedCount += 1
                let changes = try await YonaBuddyFeatureTests.messages(server, bob, type: "BuddyInfoChangeMessage")
                #expect(changes.count == expectedCount, "\(step)")
                let latest = changes.first
                #expect(value(latest, "_links", "yona:process") == nil)
                #expect((value(latest, "_links", "yona:user", "href") as? String)?.hasPrefix(server.baseURL + richard.path) == true)
                #expect(value(latest, "_links", "yona:buddy", "href") as? String == buddyURL)
                #expect(value(latest, "_links", "yona:userPhoto", "href") as? String == link, "\(step)")
                #expect(latest?["nickname"] as? String == "RQ")
                #expect(latest?["message"] as? String == "User changed personal info")
                #expect(try await Self.buddyPhotoLink(server, bob) == link, "\(step)")
            }
        }
    }

    @Test func uploadsPerAccountAreLimitedPerDay() async throws {
        try await withServer(.sqlite, adjust: { $0.photoUploadsPerAccountPerDay = 3 }) { server in
            try await RateLimitTests.inOneWindow(of: 86_400) {
                let richard = try await server.createUser(nickname: "RQ")
                let png = try Self.fixture("small.png")
                // the attack is parallel: ten uploads at once, three may pass
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<10 { group.addTask { try await Self.put(server, richard, png).status } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 200 }.count == 3, "\(statuses)")
                #expect(statuses.filter { $0 == 429 }.count == 7, "\(statuses)")
                // another account is not affected
                let bob = try await server.createUser(nickname: "BD")
                #expect(try await Self.put(server, bob, png).status == 200)
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func aDumpHoldsNoPhotoAndNoPhotoID(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await server.createUser(nickname: "RQ")
            let link = try await Self.upload(server, richard, "with-text.png")
            let stored = try await server.request(.GET, link).body
            let photoID = try #require(link.split(separator: "/").last.map(String.init))
            let uuid = try #require(UUID(uuidString: photoID))
            let dump = try await DatabaseDumpTests.dump(server)
            #expect(dump.count > 1000)
            let idBytes = Data(withUnsafeBytes(of: uuid.uuid) { Array($0) })
            let pngPart = stored.subdata(in: 8..<min(stored.count, 48))
            func hex(_ data: Data) -> Data { Data(data.map { String(format: "%02x", $0) }.joined().utf8) }
            // raw bytes (SQLite's file) and hex (pg_dump's bytea)
            for needle in [
                Data(photoID.utf8), Data(photoID.uppercased().utf8), Data(photoID.replacingOccurrences(of: "-", with: "").utf8),
                idBytes, hex(idBytes), pngPart, hex(pngPart),
            ] {
                #expect(dump.range(of: needle) == nil, "the photo or its id is readable from the \(db) dump")
            }
            // and the dump does hold the sealed photo (the check looks where the photo is)
            let sealed = try #require(try await UserPhotoRecord.query(on: server.app.db).first()?.sealedPNG)
            #expect(dump.range(of: sealed.prefix(24)) != nil || dump.range(of: hex(sealed.prefix(24))) != nil)
        }
    }
}
