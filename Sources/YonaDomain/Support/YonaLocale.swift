import Foundation

/// The locales the server speaks; picked from `Accept-Language`, falling back to en-US.
package enum YonaLocale: String, Sendable, CaseIterable {
    case enUS = "en-US"
    case nlNL = "nl-NL"

    package static let fallback = YonaLocale.enUS

    /// Honours q-values; a bare language (`nl`) matches its supported region.
    package static func pick(acceptLanguage: String?) -> YonaLocale {
        guard let header = acceptLanguage else { return fallback }
        let ranked = header.split(separator: ",").enumerated().compactMap { index, part -> (String, Double, Int)? in
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first, !tag.isEmpty else { return nil }
            var q = 1.0
            for parameter in pieces.dropFirst() where parameter.hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)) ?? 0
            }
            return (tag.lowercased(), q, index)
        }
        .filter { $0.1 > 0 }
        .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.2 < $1.2 }
        for (tag, _, _) in ranked {
            if let exact = allCases.first(where: { $0.rawValue.lowercased() == tag }) { return exact }
            if let byLanguage = allCases.first(where: { $0.rawValue.lowercased().hasPrefix(tag.prefix(2) + "-") }) {
                return byLanguage
            }
        }
        return fallback
    }
}

extension ErrorCode {
    /// The human text of an error, in the request's locale. It carries no request data, except that, as Yona's,
    /// the texts about a refused number quote it back to the caller who sent it (`quoted`).
    package func message(in locale: YonaLocale, quoting quoted: String? = nil) -> String {
        let (en, nl) = quoted == nil ? (unquotedTexts ?? texts) : texts
        var text = locale == .nlNL ? nl : en
        for (index, value) in (quoted ?? "").components(separatedBy: YonaError.separator).enumerated() {
            text = text.replacingOccurrences(of: "{\(index)}", with: value)
        }
        return text
    }

    /// Yona's texts name the property, parameter or value they refuse (its apps' tests match them); these are the
    /// texts when there is nothing to name.
    private var unquotedTexts: (String, String)? {
        switch self {
        case .missingProperty: ("A required property is missing or empty.", "Een verplichte eigenschap ontbreekt of is leeg.")
        case .extraProperty: ("The request contains a property that is not allowed.", "Het verzoek bevat een eigenschap die niet is toegestaan.")
        case .missingRequestParameter: ("A required query parameter is missing.", "Een verplichte queryparameter ontbreekt.")
        case .invalidVersionCode:
            ("The app version code must be a whole number of 0 or more.", "De versiecode van de app moet een geheel getal van 0 of meer zijn.")
        default: nil
        }
    }

    private var texts: (String, String) {
        switch self {
        case .missingPasswordHeader: ("The Yona-Password header is missing.", "De Yona-Password-header ontbreekt.")
        case .decryptingData: ("The password is not correct.", "Het wachtwoord is niet juist.")
        case .userNotFound: ("The user does not exist.", "De gebruiker bestaat niet.")
        case .invalidUUID: ("An identifier in the request is not a valid UUID.", "Een identificatie in het verzoek is geen geldige UUID.")
        // Yona's apps and tests match both Yona's own text and, for app activity, the Jackson text its server let through.
        case .missingProperty:
            ("Mandatory property '{0}' is missing. Missing required creator property '{0}'.", "Verplichte eigenschap '{0}' ontbreekt.")
        case .extraProperty: ("Property '{0}' is not supported in this context.", "Eigenschap '{0}' wordt hier niet ondersteund.")
        case .userExists: ("A user with this mobile number already exists.", "Er bestaat al een gebruiker met dit mobiele nummer.")
        case .invalidMobileNumber:
            (
                "The mobile number '{0}' is invalid. It must start with a + sign, with no spaces between the digits",
                "Het mobiele nummer '{0}' is ongeldig. Het moet beginnen met een +-teken, zonder spaties tussen de tekens"
            )
        case .mobileNumberLeadingZero:
            (
                "The mobile number '{0}' is invalid because it has a 0 following the country code. Use e.g. +316... instead of +3106...",
                "Het mobiele nummer '{0}' is ongeldig omdat het een 0 bevat achter de landcode. Gebruik b.v. +316... i.p.v. +3106..."
            )
        case .mobileNumberNotMobile:
            (
                "The number '{0}' is not a mobile number. Only mobile numbers are allowed.",
                "Het nummer '{0}' is geen mobiel nummer. Alleen mobiele nummers zijn toegestaan."
            )
        case .invalidName:
            (
                "Property '{0}' may have at most 50 characters and no control characters.",
                "Eigenschap '{0}' mag hoogstens 50 tekens hebben en geen stuurtekens."
            )
        case .firstNameMissing: ("The first name of the user must be set", "De voornaam van de gebruiker moet worden ingevuld")
        case .lastNameMissing: ("The last name of the user must be set", "De achternaam van de gebruiker moet worden ingevuld")
        case .nicknameMissing: ("The nickname of the user must be set", "De nickname van de gebruiker moet worden ingevuld")
        case .mobileNumberMissing: ("The mobile number of the user must be set", "Het mobiele nummer van de gebruiker moet worden ingevuld")
        case .emailAddressMissing: ("The email address of the user must be set", "Het e-mailadres van de gebruiker moet worden ingevuld")
        case .mobileNumberNotConfirmed: ("The mobile number is not confirmed yet.", "Het mobiele nummer is nog niet bevestigd.")
        case .confirmationCodeMismatch: ("The confirmation code is not correct.", "De bevestigingscode is niet juist.")
        case .tooManyFailedConfirmationAttempts:
            ("Too many wrong confirmation codes; request a new code.", "Te vaak een verkeerde bevestigingscode; vraag een nieuwe code aan.")
        case .confirmationCodeNotSet: ("There is no confirmation code to check.", "Er is geen bevestigingscode om te controleren.")
        case .invalidDeviceName:
            ("A device name has at most 20 characters and no colon.", "Een apparaatnaam heeft maximaal 20 tekens en geen dubbele punt.")
        case .deviceNameAlreadyExists: ("You already have a device with this name.", "Je hebt al een apparaat met deze naam.")
        case .cannotDeleteLastDevice: ("The last device cannot be deleted.", "Het laatste apparaat kan niet worden verwijderd.")
        case .cannotSwitchOperatingSystem:
            ("A device cannot switch to another operating system.", "Een apparaat kan niet van besturingssysteem wisselen.")
        case .noDeviceRequestPresent:
            ("There is no new-device request for this number.", "Er is geen verzoek voor een nieuw apparaat voor dit nummer.")
        case .deviceRequestExpired: ("The new-device request has expired.", "Het verzoek voor een nieuw apparaat is verlopen.")
        case .deviceRequestInvalidPassword: ("The new-device password is not correct.", "Het wachtwoord voor het nieuwe apparaat is niet juist.")
        case .deviceNotFound: ("The device does not exist.", "Het apparaat bestaat niet.")
        case .userPhotoNotFound: ("The photo does not exist.", "De foto bestaat niet.")
        case .invalidPhotoFileType:
            (
                "The photo must be a PNG, JPEG, GIF or BMP image of at most 2048 by 2048 pixels.",
                "De foto moet een PNG-, JPEG-, GIF- of BMP-afbeelding van hoogstens 2048 bij 2048 pixels zijn."
            )
        case .unknownOperatingSystem: ("The operating system must be ANDROID or IOS.", "Het besturingssysteem moet ANDROID of IOS zijn.")
        case .buddyOnlyTwoWay: ("Only two-way buddy relations are allowed.", "Alleen wederzijdse buddyrelaties zijn toegestaan.")
        case .buddyCannotInviteSelf: ("You cannot invite yourself as a buddy.", "Je kunt jezelf niet als buddy uitnodigen.")
        case .buddyCannotInviteExisting: ("This person is already your buddy.", "Deze persoon is al je buddy.")
        case .buddyNotFound: ("The buddy does not exist.", "De buddy bestaat niet.")
        case .buddyNotFoundForUser: ("This user is not your buddy.", "Deze gebruiker is niet je buddy.")
        case .userCreatedOnBuddyRequest:
            (
                "This account was made by a buddy's invitation; open the invitation link to take it over first.",
                "Dit account is gemaakt door de uitnodiging van een buddy; open eerst de link in de uitnodiging."
            )
        case .userNotCreatedOnBuddyRequest:
            ("This account was not made by a buddy's invitation.", "Dit account is niet gemaakt door de uitnodiging van een buddy.")
        case .appProvidedPasswordNotSupported:
            (
                "App is not allowed to define the password anymore. Upgrade to the latest version of the Yona app",
                "App mag het wachtwoord niet meer definiëren. Upgrade naar de laatste versie van de Yona app."
            )
        case .userExistsCreatedOnBuddyRequest:
            (
                "A buddy already invited this number; open the invitation link to take the account over.",
                "Een buddy heeft dit nummer al uitgenodigd; open de link in de uitnodiging om het account over te nemen."
            )
        case .maximumNumberOfUsersReached:
            ("Reached the maximum number of users that is currently allowed", "Het maximum toegestane gebruikersaantal is bereikt")
        case .numberAlreadyWhiteListed:
            (
                "Mobile number '{0}' is already on the white list of allowed numbers",
                "Mobiel nummer '{0}' staat al op de lijst van toegestane nummers"
            )
        case .numberNotWhiteListed:
            (
                "Mobile number '{0}' does not occur on the white list of allowed numbers",
                "Mobiel nummer '{0}' staat niet op de lijst van toegestane nummers"
            )
        case .overwriteCodeNotSet:
            (
                "There is no account-overwrite code for this number; request one first.",
                "Er is geen code om het account te overschrijven voor dit nummer; vraag er eerst een aan."
            )
        case .overwriteCodeMismatch: ("The account-overwrite code is not correct.", "De code om het account te overschrijven is niet juist.")
        case .tooManyFailedOverwriteAttempts:
            (
                "Too many wrong account-overwrite codes; request a new code.",
                "Te vaak een verkeerde code om het account te overschrijven; vraag een nieuwe code aan."
            )
        case .invalidEmailAddress: ("The e-mail address is not valid.", "Het e-mailadres is ongeldig.")
        case .messageNotFound: ("The message does not exist.", "Het bericht bestaat niet.")
        case .messageActionNotSupported: ("This action is not possible on this message.", "Deze actie is niet mogelijk op dit bericht.")
        case .messageActionMissingProperty:
            ("Mandatory property '{0}' is missing for this action.", "Verplichte eigenschap '{0}' ontbreekt voor deze actie.")
        case .invalidEventTime: ("The event time lies too far in the future.", "Het tijdstip van de gebeurtenis ligt te ver in de toekomst.")
        case .unauthorized: ("A valid internal token is required.", "Een geldig intern token is vereist.")
        case .activityCategoryNotFound: ("The activity category does not exist.", "De activiteitscategorie bestaat niet.")
        case .goalNotFound: ("The goal does not exist.", "Het doel bestaat niet.")
        case .invalidDate: ("String '{0}' is not a valid date.", "De tekst '{0}' is geen geldige datum.")
        case .appVersionNotSupported:
            (
                "Yona app is out of date and must be updated. Actual version is '{2}' but oldest supported version for '{0}' is '{1}'",
                "Yona app is te oud en moet worden geüpdatet. De huidige versie is {2} maar de oudste ondersteunde versie voor {0} is {1}"
            )
        case .pinResetCodeMismatch: ("The pin reset code is not correct.", "De code om de pin te resetten is onjuist.")
        case .pinResetCodeNotSet:
            ("There is no pin reset code to use; request a pin reset first.", "Er is geen code om de pin te resetten; vraag eerst een pin-reset aan.")
        case .tooManyFailedPinResetAttempts:
            ("Too many wrong pin reset codes; clear the request and start again.", "Te vaak een verkeerde code om de pin te resetten; begin opnieuw.")
        case .stringTooLong:
            (
                "The string 'message' is too long. It contains {0} characters while only 200 are allowed",
                "De tekst 'message' is te lang. Hij bevat {0} tekens terwijl er maar 200 zijn toegestaan"
            )
        case .dateTooEarly: ("Date '{0}' is too early.", "Datum '{0}' is te vroeg.")
        case .activityDateGoalMismatch:
            ("The goal did not apply on that date.", "Het doel gold niet op die datum.")
        case .buddyListEmpty: ("You have no buddies who share their activity.", "Je hebt geen buddy's die hun activiteit delen.")
        case .secondGoalOnActivityCategory:
            ("There is already a goal on this activity category.", "Er is al een doel voor deze activiteitscategorie.")
        case .cannotRemoveMandatoryGoal:
            ("A mandatory goal cannot be removed or relaxed.", "Een verplicht doel kan niet worden verwijderd of versoepeld.")
        case .cannotChangeGoalActivityCategory:
            ("A goal cannot move to another activity category.", "Een doel kan niet naar een andere activiteitscategorie.")
        case .goalBudgetNegative:
            ("The maximum duration of a budget goal cannot be negative.", "De maximale duur van een budgetdoel kan niet negatief zijn.")
        case .goalZoneRequired: ("A time zone goal needs at least one zone.", "Een tijdzonedoel heeft minstens één zone nodig.")
        case .goalZoneFormat: ("A zone must look like 08:00-12:00.", "Een zone moet eruitzien als 08:00-12:00.")
        case .goalZoneHour: ("A zone's hour must lie between 00 and 24.", "Het uur van een zone moet tussen 00 en 24 liggen.")
        case .goalZoneQuarterHour: ("A zone must start and end on a quarter hour.", "Een zone moet op een kwartier beginnen en eindigen.")
        case .goalZoneToNotBeyondFrom: ("A zone must end after it starts.", "Een zone moet eindigen na het begin.")
        case .goalZoneBeyond24: ("A zone cannot go beyond 24:00.", "Een zone kan niet na 24:00 doorlopen.")
        case .cannotChangeGoalType: ("A goal cannot change its type.", "Een doel kan niet van soort veranderen.")
        case .goalUpdateBeforeOriginal: ("A goal cannot change before it was created.", "Een doel kan niet veranderen voordat het bestond.")
        case .cannotDeleteUnprocessedMessage:
            ("This message cannot be deleted before it is answered.", "Dit bericht kan niet worden verwijderd voordat het is beantwoord.")
        case .appActivityEndBeforeStart: ("An app activity cannot end before it starts.", "Een app-activiteit kan niet eindigen voordat ze begint.")
        case .appActivityStartsInFuture: ("An app activity cannot start in the future.", "Een app-activiteit kan niet in de toekomst beginnen.")
        case .appActivityEndsInFuture: ("An app activity cannot end in the future.", "Een app-activiteit kan niet in de toekomst eindigen.")
        case .duplicateActivityCategoryName:
            ("Another activity category already has this name.", "Een andere activiteitcategorie heeft deze naam al.")
        case .invalidGoal:
            (
                "The goal is not valid: a budget needs maxDurationMinutes >= 0, time zones need zones like 08:00-12:00.",
                "Het doel is ongeldig: een budget heeft maxDurationMinutes >= 0 nodig, tijdzones hebben zones als 08:00-12:00 nodig."
            )
        case .tooManyRequests: ("Too many requests; try again later.", "Te veel verzoeken; probeer het later opnieuw.")
        case .invalidJSON:
            ("The request body is not valid JSON for this request.", "De inhoud van het verzoek is geen geldige JSON voor dit verzoek.")
        case .missingRequestParameter:
            ("Request parameter '{0}' is mandatory in this context: it is not present.", "Verzoekparameter '{0}' is hier verplicht: hij ontbreekt.")
        case .invalidParameter: ("A query parameter is not valid.", "Een queryparameter is ongeldig.")
        case .invalidVersionCode:
            ("Version code '{0}' is invalid. Must be a positive integer.", "Versiecode '{0}' is ongeldig. Het moet een positief geheel getal zijn.")
        case .invalidPushAddress:
            (
                "Property '{0}' is not a push address this server can use: a hex APNs token, or a Web Push subscription with an https endpoint on a public address and valid keys.",
                "Eigenschap '{0}' is geen pushadres dat deze server kan gebruiken: een hexadecimaal APNs-token, of een Web Push-abonnement met een https-adres op een openbaar adres en geldige sleutels."
            )
        case .invalidVersionCodeInHeader:
            (
                "Request contains an invalid version code: '{0}'. Must be an integer value > 0",
                "Het verzoek bevat een ongeldige versiecode: '{0}'. Het moet een geheel getal > 0 zijn"
            )
        case .invalidAppVersionHeader:
            (
                "Request header 'Yona-App-Version' is invalid: '{0}'. Should follow the format <OS>/<versionCode>/<versionName>",
                "Verzoekheader 'Yona-App-Version' is ongeldig: '{0}'. Het formaat is <OS>/<versionCode>/<versionName>"
            )
        case .unknownPath: ("There is nothing at this path.", "Op dit pad is niets te vinden.")
        case .methodNotAllowed: ("This method is not allowed on this path.", "Deze methode is niet toegestaan op dit pad.")
        case .tooLarge: ("The request body is too large.", "De inhoud van het verzoek is te groot.")
        case .unsupportedMediaType: ("The request body must be application/json.", "De inhoud van het verzoek moet application/json zijn.")
        case .serviceUnavailable: ("The server is busy; try again shortly.", "De server is druk; probeer het zo opnieuw.")
        case .unexpected: ("An unexpected error occurred.", "Er is een onverwachte fout opgetreden.")
        }
    }
}
