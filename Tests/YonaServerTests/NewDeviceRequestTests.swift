import Foundation
import NIOHTTP1
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// api.md "New-device requests": every step and every error code of the OTP flow.
@Suite struct NewDeviceRequestTests {
    /// Adds a device to a user the way a new phone joins: a request with an OTP, then the registration.
    static func addDevice(_ server: some APIDriving, _ user: TestUser, name: String) async throws {
        let set = try await server.request(
            .PUT, requestPath(user.mobileNumber), headers: user.passwordHeader, json: ["newDeviceRequestPassword": "Add-\(name)"])
        try #require(set.status == 204, "\(set.text)")
        let registered = try await server.request(
            .POST, "\(user.path)/devices/", headers: [("Yona-NewDeviceRequestPassword", "Add-\(name)")],
            json: [
                "name": name, "operatingSystem": "ANDROID", "appVersion": "1.0", "appVersionCode": 1,
            ])
        try #require(registered.status == 201, "\(registered.text)")
    }

    static func requestPath(_ number: String) -> String {
        "/newDeviceRequests/" + number.replacingOccurrences(of: "+", with: "%2B")
    }

    static var newDevice: [String: Any] {
        [
            "name": "Second phone", "operatingSystem": "ANDROID", "appVersion": "2.0",
            "appVersionCode": 20, "firebaseInstanceId": "fiid-second-phone",
        ]
    }

    @Test(arguments: TestDatabase.available)
    func walksTheWholeFlow(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let user = try await server.createUser()
            let path = Self.requestPath(user.mobileNumber)
            // step 2: the existing phone leaves the password under an OTP
            let set = try await server.request(.PUT, path, headers: user.passwordHeader, json: ["newDeviceRequestPassword": "aB3xY9"])
            #expect(set.status == 204, "\(set.text)")
            // step 3: existence check, then the password
            let exists = try await server.request(.GET, path)
            #expect(exists.status == 200)
            #expect(exists.json.keys.contains("yonaPassword") && exists.json["yonaPassword"] is NSNull, "an explicit null, as the apps test it")
            #expect(
                (value(exists.json, "_links", "yona:user", "href") as? String)?.hasSuffix("/users/\(user.id)?requestingUserId=\(user.id)") == true,
                "followable as given")
            let registerHref = try #require(value(exists.json, "_links", "yona:registerDevice", "href") as? String)
            #expect(registerHref.hasSuffix("/users/\(user.id)/devices/"))
            #expect(value(exists.json, "_links", "self", "href") != nil)
            #expect(value(exists.json, "_links", "edit", "href") != nil)
            let withOTP = try await server.request(.GET, path, headers: [("Yona-NewDeviceRequestPassword", "aB3xY9")])
            #expect(withOTP.json["yonaPassword"] as? String == user.password)
            // step 4: the new phone registers itself
            let registered = try await server.request(
                .POST, registerHref, headers: [("Yona-NewDeviceRequestPassword", "aB3xY9")], json: Self.newDevice)
            #expect(registered.status == 201, "\(registered.text)")
            let selfHref = try #require(value(registered.json, "_links", "self", "href") as? String)
            let newDeviceID = try #require(selfHref.split(separator: "=").last.map(String.init))
            let devices = try #require(value(registered.json, "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]])
            #expect(devices.count == 2)
            let newDevice = try #require(devices.first { $0["requestingDevice"] as? Bool == true })
            #expect(newDevice["name"] as? String == "Second phone")
            #expect(newDevice["firebaseInstanceId"] as? String == "fiid-second-phone")
            #expect((value(newDevice, "vpnProfile", "vpnLoginID") as? String)?.hasSuffix("$1") == true)
            #expect((value(newDevice, "_links", "self", "href") as? String)?.hasSuffix(newDeviceID) == true)
            // step 5: the request goes, idempotently
            #expect(try await server.request(.DELETE, path, headers: user.passwordHeader).status == 204)
            #expect(try await server.request(.DELETE, path, headers: user.passwordHeader).status == 204)
            let gone = try await server.request(.GET, path)
            #expect(gone.errorCode == "error.no.device.request.present")
        }
    }

    @Test(arguments: TestDatabase.available)
    func setErrors(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let other = try await server.createUser()
            let unconfirmed = try await server.createUser(confirm: false)
            let body = ["newDeviceRequestPassword": "aB3xY9"]
            let cases: [(String, String, [(String, String)], [String: Any], String)] = [
                ("no password", Self.requestPath(user.mobileNumber), [], body, "error.missing.password.header"),
                ("wrong password", Self.requestPath(user.mobileNumber), other.passwordHeader, body, "error.decrypting.data"),
                ("unknown number", Self.requestPath(randomMobileNumber()), user.passwordHeader, body, "error.decrypting.data"),
                ("invalid number", "/newDeviceRequests/0612345678", user.passwordHeader, body, "error.user.mobile.number.invalid"),
                ("unconfirmed", Self.requestPath(unconfirmed.mobileNumber), unconfirmed.passwordHeader, body, "error.mobile.number.not.confirmed"),
                ("missing otp", Self.requestPath(user.mobileNumber), user.passwordHeader, [:], "error.request.missing.property"),
                (
                    "extra property", Self.requestPath(user.mobileNumber), user.passwordHeader, ["newDeviceRequestPassword": "x", "y": 1],
                    "error.request.extra.property"
                ),
            ]
            for (name, path, headers, json, code) in cases {
                let response = try await server.request(.PUT, path, headers: headers, json: json)
                #expect(response.status == 400, "\(name)")
                #expect(response.errorCode == code, "\(name): \(response.text)")
            }
            // issue 13, attack 8: a number with a pending invitation answers like an unknown one, PUT and DELETE alike
            let invited = randomMobileNumber()
            _ = try await InvitationTests.invite(server, richard: user, number: invited)
            for method in [HTTPMethod.PUT, .DELETE] {
                let unknownAnswer = try await server.request(
                    method, Self.requestPath(randomMobileNumber()), headers: other.passwordHeader, json: body)
                let invitedAnswer = try await server.request(method, Self.requestPath(invited), headers: other.passwordHeader, json: body)
                #expect(
                    unknownAnswer.status == invitedAnswer.status && unknownAnswer.errorCode == invitedAnswer.errorCode,
                    "\(method): \(unknownAnswer.text) vs \(invitedAnswer.text)")
            }
            let unknown = try await server.request(.GET, Self.requestPath(randomMobileNumber()))
            #expect(unknown.errorCode == "error.no.device.request.present")
            let registeredWithoutRequest = try await server.request(.GET, Self.requestPath(user.mobileNumber))
            #expect(
                registeredWithoutRequest.errorCode == "error.no.device.request.present",
                "a registered number without request looks like an unknown one")
        }
    }

    @Test(arguments: TestDatabase.available)
    func fiveWrongPasswordsDestroyTheRequest(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let user = try await server.createUser()
            let path = Self.requestPath(user.mobileNumber)
            _ = try await server.request(.PUT, path, headers: user.passwordHeader, json: ["newDeviceRequestPassword": "aB3xY9"])
            // act: five wrong guesses, through both calls that take the OTP
            for attempt in 1...5 {
                let guess =
                    attempt % 2 == 0
                    ? try await server.request(.GET, path, headers: [("Yona-NewDeviceRequestPassword", "wrong\(attempt)")])
                    : try await server.request(
                        .POST, "\(user.path)/devices/", headers: [("Yona-NewDeviceRequestPassword", "wrong\(attempt)")], json: Self.newDevice)
                #expect(guess.status == 400)
                #expect(guess.errorCode == "error.device.request.invalid.password", "attempt \(attempt)")
            }
            // check: the sixth, even right, finds nothing
            let sixth = try await server.request(.GET, path, headers: [("Yona-NewDeviceRequestPassword", "aB3xY9")])
            #expect(sixth.errorCode == "error.no.device.request.present")
            let register = try await server.request(
                .POST, "\(user.path)/devices/", headers: [("Yona-NewDeviceRequestPassword", "aB3xY9")], json: Self.newDevice)
            #expect(register.errorCode == "error.no.device.request.present")
            #expect(try await NewDeviceRequest.query(on: server.app.db).count() == 0)
        }
    }

    @Test(arguments: TestDatabase.available)
    func aNewRequestReplacesTheOldOne(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let path = Self.requestPath(user.mobileNumber)
            _ = try await server.request(.PUT, path, headers: user.passwordHeader, json: ["newDeviceRequestPassword": "first1"])
            _ = try await server.request(.PUT, path, headers: user.passwordHeader, json: ["newDeviceRequestPassword": "second"])
            let old = try await server.request(.GET, path, headers: [("Yona-NewDeviceRequestPassword", "first1")])
            #expect(old.errorCode == "error.device.request.invalid.password")
            let new = try await server.request(.GET, path, headers: [("Yona-NewDeviceRequestPassword", "second")])
            #expect(new.json["yonaPassword"] as? String == user.password)
            #expect(try await NewDeviceRequest.query(on: server.app.db).count() == 1)
        }
    }

    @Test(arguments: TestDatabase.available)
    func registerErrors(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            _ = try await server.request(
                .PUT, Self.requestPath(user.mobileNumber), headers: user.passwordHeader, json: ["newDeviceRequestPassword": "aB3xY9"])
            let otp = [("Yona-NewDeviceRequestPassword", "aB3xY9")]
            var taken = Self.newDevice
            taken["name"] = "First device"
            let cases: [(String, [(String, String)], [String: Any], String)] = [
                ("no otp", [], Self.newDevice, "error.device.request.invalid.password"),
                ("name taken", otp, taken, "error.device.name.already.exists"),
                ("bad os", otp, Self.newDevice.merging(["operatingSystem": "SYMBIAN"]) { $1 }, "error.device.unknown.operating.system"),
                ("missing property", otp, Self.newDevice.filter { $0.key != "appVersionCode" }, "error.request.missing.property"),
            ]
            for (name, headers, json, code) in cases {
                let response = try await server.request(.POST, "\(user.path)/devices/", headers: headers, json: json)
                #expect(response.status == 400, "\(name)")
                #expect(response.errorCode == code, "\(name): \(response.text)")
            }
            let unknownUser = try await server.request(.POST, "/users/\(UUID())/devices/", headers: otp, json: Self.newDevice)
            #expect(unknownUser.errorCode == "error.user.not.found.id")
        }
    }

    @Test(arguments: TestDatabase.available)
    func expiredRequestsAreRefusedAndPurged(db: TestDatabase) async throws {
        try await withServer(db, adjust: { $0.newDeviceRequestLifetime = 1 }) { server in
            let user = try await server.createUser()
            let path = Self.requestPath(user.mobileNumber)
            _ = try await server.request(.PUT, path, headers: user.passwordHeader, json: ["newDeviceRequestPassword": "aB3xY9"])
            try await Task.sleep(for: .milliseconds(1300))
            let expired = try await server.request(.GET, path, headers: [("Yona-NewDeviceRequestPassword", "aB3xY9")])
            #expect(expired.errorCode == "error.device.request.expired")
            let service = NewDeviceRequestService(
                db: server.app.db,
                users: UserService(db: server.app.db, sms: server.app.sms(on: server.app.db), recovery: server.app.yona.recovery, testServer: true),
                argon2: server.app.yona.argon2, lifetime: 1)
            try await service.purgeExpired(now: Date().addingTimeInterval(120))
            #expect(try await NewDeviceRequest.query(on: server.app.db).count() == 0)
        }
    }
}
