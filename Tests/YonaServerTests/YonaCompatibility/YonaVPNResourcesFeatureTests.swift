import Foundation
import Testing

@testable import YonaAPI
@testable import YonaConfig
@testable import YonaDomain
@testable import YonaServer

/// The files a device downloads to set up monitoring, as Yona's `DeviceTest` reads them ('Create John Doe with an
/// Android device', 'Retrieve SSL root certificate', `assertInitialDeviceDetails`): `yona:sslRootCert` with
/// `sslRootCertCN`, the OpenVPN profile, and the Apple configuration profile with the device's VPN account, signed
/// (PKCS#7) when a key is configured and checked here with `openssl smime -verify`.
@Suite struct YonaVPNResourcesFeatureTests {
    static let resources = JSONSchema.projectRoot.appendingPathComponent("Sources/YonaConfig/Samples")

    /// John as `createJohnDoe` + confirmation: the app's view of the profile.
    static func john(_ server: TestServer, device: [String: Any]) async throws -> YonaApp {
        try await YonaApp.add(server, firstName: "John", nickname: "JD", device: device)
    }

    static var android: [String: Any] {
        [
            "deviceName": "My S8", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1,
        ]
    }

    @Test(arguments: TestDatabase.available)
    func deviceTestCreateJohnDoeWithAnAndroidDeviceAndRetrieveTheVPNFiles(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let john = try await Self.john(server, device: Self.android)
            let device = try #require(john.requestingDevice)
            let deviceID = try #require(john.requestingDeviceID)
            let base = String(john.url.prefix { $0 != "?" })
            // the path fragments Yona's test pins (the Swagger spec names them)
            #expect(value(device, "_links", "yona:appleMobileConfig", "href") as? String == "\(base)/devices/\(deviceID)/apple.mobileconfig")
            #expect(value(device, "_links", "yona:postVpnStatusEvent", "href") as? String == "\(base)/devices/\(deviceID)/vpnStatus/")

            // 'Retrieve SSL root certificate': the CN is the configured certificate's issuer
            #expect(device["sslRootCertCN"] as? String == "yona-sample-root.invalid")
            let rootHref = try #require(value(device, "_links", "yona:sslRootCert", "href") as? String)
            let root = try await server.request(.GET, rootHref)
            #expect(root.status == 200)
            #expect(root.headers.first(name: "Content-Type") == "application/pkix-cert")
            #expect(root.body == (try Data(contentsOf: Self.resources.appendingPathComponent("rootcert.cer"))))

            let ovpnHref = try #require(value(device, "vpnProfile", "_links", "yona:ovpnProfile", "href") as? String)
            let ovpn = try await server.request(.GET, ovpnHref)
            #expect(ovpn.status == 200)
            #expect(ovpn.headers.first(name: "Content-Type") == "application/x-openvpn-profile")
            #expect(ovpn.text.contains("auth-user-pass"))

            // the configuration profile carries this device's account, as OpenVPN Connect reads it
            let loginID = try #require(value(device, "vpnProfile", "vpnLoginID") as? String)
            let password = try #require(value(device, "vpnProfile", "vpnPassword") as? String)
            let configHref = try #require(value(device, "_links", "yona:appleMobileConfig", "href") as? String)
            let config = try await server.request(.GET, configHref, headers: john.headers)
            #expect(config.status == 200, "\(config.text)")
            #expect(config.headers.first(name: "Content-Type") == "application/x-apple-aspen-config")
            #expect(config.text.contains("<string>\(loginID)\\n\(password)</string>"))
            // unsigned (no key configured), it is a property list whose VPN account is the device's
            let plist = try #require(try PropertyListSerialization.propertyList(from: config.body, format: nil) as? [String: Any])
            let vpn = (plist["PayloadContent"] as? [[String: Any]])?.first
            #expect(value(vpn, "VPN", "AuthName") as? String == loginID)
            #expect(value(vpn, "VPN", "AuthPassword") as? String == password)
        }
    }

    @Test(arguments: TestDatabase.available)
    func onlyTheRequestingDeviceCarriesTheSetUpLinksAndOnlyItsOwnerGetsItsProfile(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let john = try await Self.john(server, device: Self.android)
            let johnUser = TestUser(
                id: try #require(john.url.split(separator: "/").last.map { String($0.prefix { $0 != "?" }) }), password: john.password,
                mobileNumber: try #require(john.json["mobileNumber"] as? String), firstName: "John", nickname: "JD")
            try await NewDeviceRequestTests.addDevice(server, johnUser, name: "Tablet")
            let profile = try await server.request(.GET, john.url, headers: john.headers)
            let devices = value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices") as? [[String: Any]] ?? []
            #expect(devices.count == 2)
            let other = try #require(devices.first { $0["requestingDevice"] as? Bool == false })
            #expect(other["sslRootCertCN"] == nil)
            #expect(value(other, "_links", "yona:sslRootCert") == nil && value(other, "_links", "yona:appleMobileConfig") == nil)
            #expect(value(other, "_links", "yona:postVpnStatusEvent") == nil)

            let configHref = try #require(value(john.requestingDevice, "_links", "yona:appleMobileConfig", "href") as? String)
            let withoutPassword = try await server.request(.GET, configHref)
            #expect(withoutPassword.status == 400 || withoutPassword.status == 401, "\(withoutPassword.text)")
            #expect(!withoutPassword.text.contains(try #require(value(john.requestingDevice, "vpnProfile", "vpnPassword") as? String)))
            let stranger = try await server.createUser()
            let othersPassword = try await server.request(.GET, configHref, headers: stranger.passwordHeader)
            #expect(othersPassword.status >= 400 && othersPassword.status < 500, "\(othersPassword.text)")
            #expect(othersPassword.headers.first(name: "Content-Type") != "application/x-apple-aspen-config")
        }
    }

    @Test func appleAppSiteAssociationNamesTheConfiguredApp() async throws {
        try await withServer(.sqlite, adjust: { $0.vpn.appleAppID = "ABCDE12345.org.example.yona" }) { server in
            let answer = try await server.request(.GET, "/.well-known/apple-app-site-association")
            #expect(answer.status == 200)
            #expect(answer.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true)
            let details = value(answer.json, "applinks", "details") as? [[String: Any]]
            #expect(details?.first?["appID"] as? String == "ABCDE12345.org.example.yona")
            #expect(details?.first?["paths"] as? [String] == ["/yonaapp/"])
            #expect(value(answer.json, "applinks", "apps") as? [String] == [])
        }
    }

    /// operations.md "VPN files": a file switched off (an empty variable) is not linked, its endpoint answers 404, and
    /// the profile still renders.
    @Test func filesSwitchedOffAreNotLinkedAnswer404AndTheProfileStillRenders() async throws {
        try await withServer(
            .sqlite,
            adjust: {
                $0.vpn.ovpnProfile = nil
                $0.vpn.sslRootCertificate = nil
                $0.vpn.mobileConfigTemplate = nil
            }
        ) { server in
            let john = try await Self.john(server, device: Self.android)
            #expect(john.requestingDevice?["sslRootCertCN"] == nil)
            #expect(value(john.requestingDevice, "_links", "yona:sslRootCert") == nil)
            #expect(value(john.requestingDevice, "_links", "yona:appleMobileConfig") == nil)
            #expect(value(john.requestingDevice, "vpnProfile", "_links") == nil)
            #expect(value(john.requestingDevice, "vpnProfile", "vpnLoginID") is String, "the VPN account is still shown")
            let device = try #require(value(john.requestingDevice, "_links", "self", "href") as? String)
            let base = String(device[..<(try #require(device.range(of: "/users/"))).lowerBound])
            let mobileConfig = String(device.prefix { $0 != "?" }) + "/apple.mobileconfig"
            for href in [base + "/ssl/rootcert.cer", base + "/vpn/profile.ovpn", mobileConfig] {
                let answer = try await server.request(.GET, href, headers: john.headers)
                #expect(answer.status == 404 && answer.errorCode == "error.request.unknown.path", "\(href): \(answer.text)")
            }
        }
    }

    /// A throwaway PKI made with the openssl tool: a root, an intermediate and a profile-signing certificate.
    struct SigningPKI {
        let directory: URL
        var root: String { directory.appendingPathComponent("root.pem").path }
        var intermediate: String { directory.appendingPathComponent("intermediate.pem").path }
        var signer: String { directory.appendingPathComponent("signer.pem").path }
        var signerKey: String { directory.appendingPathComponent("signer.key").path }
        var otherKey: String { directory.appendingPathComponent("other.key").path }

        static func make() throws -> SigningPKI {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yona-pki-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let pki = SigningPKI(directory: directory)
            func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
            let caExtensions = path("ca.ext")
            try Data("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n".utf8).write(to: URL(fileURLWithPath: caExtensions))
            _ = try ExternalTool.run(
                "openssl",
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("root.key"), "-out", pki.root, "-days", "2", "-subj",
                    "/CN=Test Root",
                ])
            _ = try ExternalTool.run(
                "openssl",
                [
                    "req", "-newkey", "rsa:2048", "-nodes", "-keyout", path("intermediate.key"), "-out", path("intermediate.csr"), "-subj",
                    "/CN=Test Intermediate",
                ])
            _ = try ExternalTool.run(
                "openssl",
                [
                    "x509", "-req", "-in", path("intermediate.csr"), "-CA", pki.root, "-CAkey", path("root.key"), "-CAcreateserial",
                    "-out", pki.intermediate, "-days", "2", "-extfile", caExtensions,
                ])
            _ = try ExternalTool.run(
                "openssl",
                ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", pki.signerKey, "-out", path("signer.csr"), "-subj", "/CN=Profile Signer"])
            _ = try ExternalTool.run(
                "openssl",
                [
                    "x509", "-req", "-in", path("signer.csr"), "-CA", pki.intermediate, "-CAkey", path("intermediate.key"), "-CAcreateserial",
                    "-out", pki.signer, "-days", "2",
                ])
            _ = try ExternalTool.run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", pki.otherKey])
            return pki
        }

        /// `openssl smime -verify` of a DER PKCS#7 against the root only (the chain must come in the signature);
        /// the signed content, or nil when the signature does not verify.
        func verify(_ der: Data) throws -> Data? {
            let input = directory.appendingPathComponent("profile-\(UUID().uuidString).der")
            let output = directory.appendingPathComponent("content-\(UUID().uuidString).xml")
            try der.write(to: input)
            do {
                _ = try ExternalTool.run(
                    "openssl", ["smime", "-verify", "-inform", "DER", "-in", input.path, "-CAfile", root, "-purpose", "any", "-out", output.path])
            } catch {
                return nil
            }
            return try Data(contentsOf: output)
        }
    }

    @Test func signedProfileVerifiesWithOpenSSLAndATamperedOneDoesNot() async throws {
        let pki = try await ExternalTool.detached { try SigningPKI.make() }
        defer { try? FileManager.default.removeItem(at: pki.directory) }
        try await withServer(
            .sqlite,
            adjust: {
                $0.vpn.signingCertificatePath = pki.signer
                $0.vpn.signingKeyPath = pki.signerKey
                $0.vpn.signingChainPath = pki.intermediate
            }
        ) { server in
            let john = try await Self.john(server, device: Self.android)
            let href = try #require(value(john.requestingDevice, "_links", "yona:appleMobileConfig", "href") as? String)
            let signed = try await server.request(.GET, href, headers: john.headers)
            #expect(signed.status == 200)
            #expect(signed.headers.first(name: "Content-Type") == "application/x-apple-aspen-config")
            let body = signed.body
            let content = try #require(try await ExternalTool.detached { try pki.verify(body) }, "openssl smime -verify refused the signed profile")
            let loginID = try #require(value(john.requestingDevice, "vpnProfile", "vpnLoginID") as? String)
            let password = try #require(value(john.requestingDevice, "vpnProfile", "vpnPassword") as? String)
            let text = String(decoding: content, as: UTF8.self)
            #expect(text.contains("<string>\(loginID)</string>") && text.contains("<string>\(password)</string>"))
            // Yona's test reads the account straight out of the signed bytes: the content is attached, not detached
            #expect(signed.text.contains("<string>\(loginID)\\n\(password)</string>"))

            // one changed byte of the signed content breaks the signature
            var tampered = signed.body
            let at = try #require(tampered.range(of: Data(password.utf8))).lowerBound
            tampered[at] = tampered[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let tamperedBody = tampered
            #expect(try await ExternalTool.detached { try pki.verify(tamperedBody) } == nil)
        }
    }

    @Test func badVPNFileSettingsStopStartUpNamingTheVariable() async throws {
        let pki = try await ExternalTool.detached { try SigningPKI.make() }
        defer { try? FileManager.default.removeItem(at: pki.directory) }
        func load(_ env: [String: String]) throws -> VPNResources {
            var settings = VPNResourceSettings()
            try settings.read(env)
            return try VPNResources.load(settings, logger: .init(label: "test"))
        }
        func variable(_ env: [String: String]) -> String? {
            do {
                _ = try load(env)
                return nil
            } catch let error as AppConfig.Invalid {
                return error.variable
            } catch {
                return "\(error)"
            }
        }
        #expect(variable(["YONA_OVPN_PROFILE_PATH": "/nonexistent/profile.ovpn"]) == "YONA_OVPN_PROFILE_PATH")
        #expect(variable(["YONA_SSL_ROOT_CERT_PATH": Self.resources.appendingPathComponent("profile.ovpn").path]) == "YONA_SSL_ROOT_CERT_PATH")
        #expect(
            variable(["YONA_APPLE_MOBILECONFIG_TEMPLATE_PATH": Self.resources.appendingPathComponent("profile.ovpn").path])
                == "YONA_APPLE_MOBILECONFIG_TEMPLATE_PATH")
        #expect(variable(["YONA_APPLE_MOBILECONFIG_SIGNING_CERT_PATH": pki.signer]) == "YONA_APPLE_MOBILECONFIG_SIGNING_KEY_PATH")
        #expect(
            variable(["YONA_APPLE_MOBILECONFIG_SIGNING_CERT_PATH": pki.signer, "YONA_APPLE_MOBILECONFIG_SIGNING_KEY_PATH": pki.otherKey])
                == "YONA_APPLE_MOBILECONFIG_SIGNING_KEY_PATH")
        #expect(
            variable(["YONA_APPLE_MOBILECONFIG_SIGNING_CERT_PATH": pki.signerKey, "YONA_APPLE_MOBILECONFIG_SIGNING_KEY_PATH": pki.signerKey])
                == "YONA_APPLE_MOBILECONFIG_SIGNING_CERT_PATH")
        #expect(variable(["YONA_APPLE_APP_ID": "not an id"]) == "YONA_APPLE_APP_ID")
        // the samples are in the binary: the defaults load whatever the working directory
        let samples = try VPNResources.load(VPNResourceSettings(), logger: .init(label: "test"))
        #expect(samples.ovpnProfile == Array(try Data(contentsOf: Self.resources.appendingPathComponent("profile.ovpn"))))
        #expect(samples.sslRootCertificate == Array(try Data(contentsOf: Self.resources.appendingPathComponent("rootcert.cer"))))
        #expect(samples.mobileConfigTemplate?.contains(VPNResources.loginIDPlaceholder) == true)
        // an empty value switches a file off
        let none = try load(["YONA_OVPN_PROFILE_PATH": "", "YONA_SSL_ROOT_CERT_PATH": "", "YONA_APPLE_MOBILECONFIG_TEMPLATE_PATH": ""])
        #expect(none.ovpnProfile == nil && none.sslRootCertificate == nil && none.mobileConfigTemplate == nil)
        // and a good signing setting loads
        let signing = try load([
            "YONA_APPLE_MOBILECONFIG_SIGNING_CERT_PATH": pki.signer, "YONA_APPLE_MOBILECONFIG_SIGNING_KEY_PATH": pki.signerKey,
            "YONA_APPLE_MOBILECONFIG_SIGNING_CHAIN_PATH": pki.intermediate,
        ])
        #expect(signing.signer != nil)
    }
}
