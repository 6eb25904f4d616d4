import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer
@testable import YonaStore

/// api.md "Errors": every user-related row of the table, with its status and code.
@Suite struct UserErrorTests {
    @Test(arguments: TestDatabase.available)
    func passwordAndIdentifierErrors(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let cases: [(String, String, [(String, String)], Int, String)] = [
                ("missing password", user.profilePath, [], 400, "error.missing.password.header"),
                ("wrong password", user.profilePath, [("Yona-Password", String(user.password.reversed()))], 400, "error.decrypting.data"),
                ("garbage password", user.profilePath, [("Yona-Password", "not a password")], 400, "error.decrypting.data"),
                ("unknown user", "/users/\(UUID())?requestingUserId=\(UUID())", user.passwordHeader, 400, "error.user.not.found.id"),
                ("malformed path id", "/users/nope?requestingUserId=\(user.id)", user.passwordHeader, 400, "error.invalid.uuid"),
                ("malformed query id", "/users/\(user.id)?requestingUserId=nope", user.passwordHeader, 400, "error.invalid.uuid"),
                ("missing requestingUserId", user.path, user.passwordHeader, 400, "error.request.missing.request.parameter"),
                (
                    "unknown requesting device", "\(user.profilePath)&requestingDeviceId=\(UUID())", user.passwordHeader, 404,
                    "error.device.not.found.id"
                ),
            ]
            for (name, path, headers, status, code) in cases {
                let response = try await server.request(.GET, path, headers: headers)
                #expect(response.status == status, "\(name)")
                #expect(response.errorCode == code, "\(name): \(response.text)")
                #expect(response.json["correlationId"] as? String != nil, "\(name)")
                #expect((response.json["message"] as? String)?.isEmpty == false, "\(name)")
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func createBodyErrors(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let existing = try await server.createUser()
            let valid: [String: Any] = ["firstName": "A", "lastName": "B", "nickname": "C", "mobileNumber": randomMobileNumber()]
            func with(_ changes: [String: Any?]) -> [String: Any] {
                var body = valid
                for (key, value) in changes { body[key] = value }
                return body
            }
            let device: [String: Any] = ["deviceName": "Phone", "deviceOperatingSystem": "IOS", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1]
            let cases: [(String, [String: Any], String)] = [
                ("extra property", with(["favouriteColour": "red"]), "error.request.extra.property"),
                // Yona's codes per property (UserValidationTest)
                ("missing nickname", with(["nickname": nil]), "error.user.nickname"),
                ("blank first name", with(["firstName": "  "]), "error.user.firstname"),
                ("missing last name", with(["lastName": nil]), "error.user.lastname"),
                ("missing number", with(["mobileNumber": nil]), "error.user.mobile.number"),
                ("fixed-line number", with(["mobileNumber": "+31356474747"]), "error.user.mobile.number.not.mobile"),
                // issue 13, attack 4: names cannot carry a message into the texts that name the person
                ("long name", with(["firstName": String(repeating: "a", count: 51)]), "error.user.name.invalid"),
                ("name with a control character", with(["nickname": "a\u{7}b"]), "error.user.name.invalid"),
                ("number already registered", with(["mobileNumber": existing.mobileNumber]), "error.user.exists"),
                ("number with trunk zero", with(["mobileNumber": "+310612345678"]), "error.user.mobile.number.invalid.leading.zero"),
                ("number without plus", with(["mobileNumber": "0612345678"]), "error.user.mobile.number.invalid"),
                ("number with letters", with(["mobileNumber": "+31612abc678"]), "error.user.mobile.number.invalid"),
                ("partial device fields", with(["deviceName": "Phone"]), "error.request.missing.property"),
                (
                    "unknown operating system", with(device.merging(["deviceOperatingSystem": "WINDOWS"]) { $1 }),
                    "error.device.unknown.operating.system"
                ),
                (
                    "device name too long", with(device.merging(["deviceName": String(repeating: "x", count: 21)]) { $1 }),
                    "error.device.invalid.device.name"
                ),
                ("device name with colon", with(device.merging(["deviceName": "a:b"]) { $1 }), "error.device.invalid.device.name"),
                ("wrong type", with(["firstName": 12]), "error.request.invalid.json"),
                // PostgreSQL's text columns refuse NUL (the app version is stored as text): 400, not 500
                ("NUL in a stored text", with(device.merging(["deviceAppVersion": "1.0\u{0}"]) { $1 }), "error.request.invalid.json"),
                ("NUL in a sealed text", with(["nickname": "a\u{0}b"]), "error.request.invalid.json"),
            ]
            for (name, body, code) in cases {
                let response = try await server.request(.POST, "/users/", json: body)
                #expect(response.status == 400, "\(name)")
                #expect(response.errorCode == code, "\(name): \(response.text)")
            }
            // Nothing of the refused attempts was stored.
            #expect(try await User.query(on: server.app.db).count() == 1)
        }
    }

    @Test(arguments: TestDatabase.available)
    func fiveWrongCodesCountDownAndThenLock(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let user = try await server.createUser(confirm: false)
            let confirmPath = "\(user.path)/confirmMobileNumber"
            // act + check: 4, 3, 2, 1, 0 remaining
            for remaining in [4, 3, 2, 1, 0] {
                let wrong = try await server.request(.POST, confirmPath, headers: user.passwordHeader, json: ["code": "9999"])
                #expect(wrong.status == 400)
                #expect(wrong.errorCode == "error.mobile.number.confirmation.code.mismatch")
                #expect(wrong.json["remainingAttempts"] as? Int == remaining)
            }
            // then locked, even for the right code
            let locked = try await server.request(.POST, confirmPath, headers: user.passwordHeader, json: ["code": "1234"])
            #expect(locked.status == 400)
            #expect(locked.errorCode == "error.mobile.number.confirmation.code.too.many.failed.attempts")
            let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
            #expect(value(profile.json, "_links", "yona:confirmMobileNumber") != nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func parallelWrongCodesNeverGetMoreThanFiveTries(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser(confirm: false)
            let codes = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        try await server.request(
                            .POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader,
                            json: ["code": "9999"]
                        ).errorCode
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(codes.filter { $0 == "error.mobile.number.confirmation.code.mismatch" }.count == 5)
            #expect(codes.filter { $0 == "error.mobile.number.confirmation.code.too.many.failed.attempts" }.count == 7)
        }
    }

    /// issue 13, attack 2: wrong guesses in parallel with the right code. Each try is counted before its code is
    /// compared, so at most five codes are ever evaluated: the right one wins only if it got one of the five tries.
    @Test(arguments: TestDatabase.available)
    func theRightCodeCannotSlipInAfterTheLockout(db: TestDatabase) async throws {
        try await withServer(db) { server in
            for _ in 0..<3 {
                let user = try await server.createUser(confirm: false)
                let codes = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for index in 0..<21 {
                        group.addTask {
                            let response = try await server.request(
                                .POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader,
                                json: ["code": index == 10 ? "1234" : "9999"])
                            return (response.status, response.errorCode)
                        }
                    }
                    return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
                }
                let evaluated = codes.filter { $0.0 == 200 || $0.1 == "error.mobile.number.confirmation.code.mismatch" }
                #expect(evaluated.count <= 5, "only five tries may be evaluated: \(codes)")
                let accepted = codes.filter { $0.0 == 200 }.count
                let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
                #expect((value(profile.json, "_links", "yona:messages") != nil) == (accepted == 1), "confirmed exactly when a try accepted it")
            }
        }
    }

    /// The race the attack above once won on PostgreSQL, played in order: a guess reads the code, the right code
    /// confirms (clearing the code and the count), and only then does the guess reserve its try. It must find the
    /// code gone, not a fresh count to spend against a code that no longer exists.
    @Test(arguments: TestDatabase.available)
    func aGuessThatReadTheCodeBeforeTheRightOneConfirmedIsNotCounted(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: a guess has read the stored code; then the right code confirms
            let user = try await server.createUser(confirm: false)
            let id = try #require(UUID(uuidString: user.id))
            let readByTheGuess = try #require(try await User.find(id, on: server.app.db)?.confirmationCode)
            let wrong = try await server.request(.POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader, json: ["code": "9999"])
            #expect(wrong.json["remainingAttempts"] as? Int == 4)
            let right = try await server.request(.POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader, json: ["code": "1234"])
            #expect(right.status == 200, "\(right.text)")
            // act: the guess reserves its try
            let reservation = try await User.reserveAttempt(.confirmation, of: id, code: readByTheGuess, limit: 5, on: server.app.db)
            // check: nothing reserved, nothing counted
            #expect(reservation == .codeGone)
            #expect(try await User.find(id, on: server.app.db)?.confirmationFailedAttempts == 0)
        }
    }

    /// A try against the code still stored but after five wrong ones finds no try left.
    @Test(arguments: TestDatabase.available)
    func aReservationAfterFiveWrongCodesFindsNoneLeft(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser(confirm: false)
            let id = try #require(UUID(uuidString: user.id))
            for _ in 0..<5 {
                _ = try await server.request(.POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader, json: ["code": "9999"])
            }
            let stored = try #require(try await User.find(id, on: server.app.db)?.confirmationCode)
            #expect(try await User.reserveAttempt(.confirmation, of: id, code: stored, limit: 5, on: server.app.db) == .exhausted)
            #expect(try await User.reserveAttempt(.confirmation, of: id, code: stored, limit: 6, on: server.app.db) == .reserved(6))
        }
    }

    /// issue 13, attack 1: five wrong guesses, then the number switched away and back for a fresh code and a fresh
    /// count. The count stays with the account, and every guess and text counts against the number's allowance.
    @Test(arguments: TestDatabase.available)
    func switchingNumbersBuysNoGuesses(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser(confirm: false)
            for _ in 0..<5 {
                _ = try await server.request(.POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader, json: ["code": "9999"])
            }
            // an unconfirmed profile embeds no devices; its edit link carries the default device
            let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
            let edit = try #require(value(profile.json, "_links", "edit", "href") as? String)
            for number in [randomMobileNumber(), user.mobileNumber] {
                let switched = try await server.request(
                    .PUT, edit, headers: user.passwordHeader,
                    json: [
                        "firstName": "A", "lastName": "B", "nickname": "C", "mobileNumber": number,
                    ])
                #expect(switched.status == 200, "\(switched.text)")
            }
            let right = try await server.request(.POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader, json: ["code": "1234"])
            #expect(right.errorCode == "error.mobile.number.confirmation.code.too.many.failed.attempts")
        }
        // and the number's hourly allowance stops guessing altogether
        try await withServer(db, adjust: { $0.rateLimitPerNumberPerHour = 4 }) { server in
            try await RateLimitTests.inOneWindow(of: 3600) {
                let user = try await server.createUser(confirm: false)
                var statuses: [Int] = []
                for _ in 0..<5 {
                    statuses.append(
                        try await server.request(
                            .POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader,
                            json: ["code": "9999"]
                        ).status)
                }
                #expect(statuses.last == 429, "\(statuses)")
            }
        }
    }

    @Test(arguments: TestDatabase.available)
    func updateErrors(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let other = try await server.createUser()
            let body: [String: Any] = ["firstName": "A", "lastName": "B", "nickname": "C", "mobileNumber": other.mobileNumber]
            let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
            let edit = "\(user.path)?requestingDeviceId=\(deviceID)"
            let taken = try await server.request(.PUT, edit, headers: user.passwordHeader, json: body)
            #expect(taken.errorCode == "error.user.exists")
            let noPassword = try await server.request(.PUT, edit, json: body)
            #expect(noPassword.errorCode == "error.missing.password.header")
            // Yona: the requesting device is mandatory on an update (UserTest "without requesting device ID")
            let noDevice = try await server.request(.PUT, user.path, headers: user.passwordHeader, json: body)
            #expect(noDevice.errorCode == "error.request.missing.request.parameter")
            let extra = try await server.request(.PUT, edit, headers: user.passwordHeader, json: body.merging(["x": 1]) { $1 })
            #expect(extra.errorCode == "error.request.extra.property")
            let wrongPassword = try await server.request(.DELETE, user.path, headers: other.passwordHeader)
            #expect(wrongPassword.errorCode == "error.decrypting.data")
            let stillThere = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
            #expect(stillThere.status == 200)
        }
    }
}
