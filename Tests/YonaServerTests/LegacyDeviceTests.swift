import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer

/// api.md "Legacy-device detection" and docs/legacy-devices.md: two phones that share one device entry.
@Suite struct LegacyDeviceTests {
    @Test(arguments: TestDatabase.available)
    func secondPhoneDetectsTheSharedEntryAndReRegistersItself(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: phone A registered the account and its Instance ID; phone B was set up from the same
            // backup, so it knows the same user, password and device id, but has no Instance ID of its own
            let user = try await server.createUser(extra: [
                "deviceName": "Phone A", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0",
                "deviceAppVersionCode": 1, "deviceFirebaseInstanceId": "fiid-phone-A",
            ])
            let (sharedDeviceID, _) = try await DevicesTests.firstDevice(server, user)
            let phoneB = LegacyPhone(ownInstanceID: nil, deviceID: sharedDeviceID)

            // act: phone B fetches its profile as its device
            let seenByB = try await server.request(.GET, "\(user.profilePath)&requestingDeviceId=\(phoneB.deviceID)", headers: user.passwordHeader)
            let sharedEntry = try #require(
                (value(seenByB.json, "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]])?
                    .first { $0["requestingDevice"] as? Bool == true })

            // check: it sees phone A's Instance ID on "its" device, so it knows the entry is shared
            let shownInstanceID = sharedEntry["firebaseInstanceId"] as? String
            #expect(shownInstanceID == "fiid-phone-A")
            #expect(phoneB.sharesDeviceEntry(shownInstanceID: shownInstanceID))

            // act: phone B re-registers itself through the OTP flow, on the same phone
            let otp = "Zq8Lm2"
            let path = NewDeviceRequestTests.requestPath(user.mobileNumber)
            #expect(try await server.request(.PUT, path, headers: user.passwordHeader, json: ["newDeviceRequestPassword": otp]).status == 204)
            let request = try await server.request(.GET, path, headers: [("Yona-NewDeviceRequestPassword", otp)])
            let password = try #require(request.json["yonaPassword"] as? String)
            let registerHref = try #require(value(request.json, "_links", "yona:registerDevice", "href") as? String)
            let registered = try await server.request(
                .POST, registerHref, headers: [("Yona-NewDeviceRequestPassword", otp)],
                json: [
                    "name": "Phone B", "operatingSystem": "ANDROID", "appVersion": "1.0", "appVersionCode": 1,
                    "firebaseInstanceId": "fiid-phone-B",
                ])
            #expect(registered.status == 201, "\(registered.text)")
            let selfHref = try #require(value(registered.json, "_links", "self", "href") as? String)
            let phoneBDeviceID = try #require(URLComponents(string: selfHref)?.queryItems?.first { $0.name == "requestingDeviceId" }?.value)
            #expect(try await server.request(.DELETE, path, headers: [("Yona-Password", password)]).status == 204)

            // check: each phone now has its own device with its own Instance ID and is the requesting one
            let asB = try await server.request(.GET, "\(user.profilePath)&requestingDeviceId=\(phoneBDeviceID)", headers: user.passwordHeader)
            let asA = try await server.request(.GET, "\(user.profilePath)&requestingDeviceId=\(sharedDeviceID)", headers: user.passwordHeader)
            for (view, me, myInstanceID) in [(asB, "Phone B", "fiid-phone-B"), (asA, "Phone A", "fiid-phone-A")] {
                let devices = try #require(value(view.json, "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]])
                #expect(devices.count == 2)
                let requesting = devices.filter { $0["requestingDevice"] as? Bool == true }
                #expect(requesting.count == 1)
                #expect(requesting.first?["name"] as? String == me)
                #expect(requesting.first?["firebaseInstanceId"] as? String == myInstanceID)
            }
            #expect(phoneB.sharesDeviceEntry(shownInstanceID: "fiid-phone-B") == true, "phone B without an own ID would still ask")
            #expect(LegacyPhone(ownInstanceID: "fiid-phone-B", deviceID: phoneBDeviceID).sharesDeviceEntry(shownInstanceID: "fiid-phone-B") == false)
        }
    }
}

/// The app-side rule of docs/legacy-devices.md, as a phone applies it.
struct LegacyPhone {
    let ownInstanceID: String?
    let deviceID: String

    /// A phone with no Instance ID of its own that sees one on its device entry shares that entry;
    /// a phone whose own ID differs from the shown one does too.
    func sharesDeviceEntry(shownInstanceID: String?) -> Bool {
        guard let shownInstanceID else { return false }
        return ownInstanceID != shownInstanceID
    }
}
