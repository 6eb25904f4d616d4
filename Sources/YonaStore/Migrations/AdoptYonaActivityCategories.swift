import FluentKit
import Foundation

/// Replaces the first default categories with Yona's own set: Yona's fixed ids (the apps and Yona's suite name
/// categories by them), names, descriptions and applications, and Gambling, not Adult content, as the mandatory
/// no-go category. Classifier names keep the earlier aliases too, so a classifier configured for them still maps.
/// Goals move to the new ids; every user gets the Gambling no-go goal if it had none (dated as Yona dates it).
package struct AdoptYonaActivityCategories: AsyncMigration {
    package struct Replacement {
        package let oldID: UUID
        package let category: ActivityCategory
    }

    package static let replacements: [Replacement] = [
        Replacement(
            oldID: UUID(uuidString: "2072aa78-96ac-472c-942d-a5942dd9c21f")!,
            category: ActivityCategory(
                id: UUID(uuidString: "192d69f4-8d3e-499b-983c-36ca97340ba9")!,
                names: ["en-US": "Gambling", "nl-NL": "Gokken"],
                descriptions: [
                    "en-US": "This challenge includes apps and sites like Poker and Blackjack",
                    "nl-NL": "Deze challenge bevat apps en sites zoals Poker en Blackjack",
                ],
                classifierCategories: ["Gambling", "KS-Gokken", "lotto", "gambling"],
                applications: ["Poker App", "Lotto App", "Lotto"], mandatoryNoGo: true)),
        Replacement(
            oldID: UUID(uuidString: "bc7f8712-7073-4103-8950-bf51acc68d83")!,
            category: ActivityCategory(
                id: UUID(uuidString: "743738fd-052f-4532-a2a3-ba60dcb1adbf")!,
                names: ["en-US": "News", "nl-NL": "Nieuws"],
                descriptions: [
                    "en-US": "This challenge includes apps and sites like NU.nl and NOS",
                    "nl-NL": "Deze challenge bevat apps en sites zoals NU.nl en NOS",
                ],
                classifierCategories: ["News", "KS-Nieuws", "KS-Radio En Tv", "news/media", "newsgroups/forums"],
                applications: ["nl.sanomamedia.android.nu", "nl.nos.app", "NU.nl"], mandatoryNoGo: false)),
        Replacement(
            oldID: UUID(uuidString: "cea0db14-68b3-422b-a22e-a92601e25dc2")!,
            category: ActivityCategory(
                id: UUID(uuidString: "27395d17-7022-4f71-9daf-f431ff4f11e8")!,
                names: ["en-US": "Social", "nl-NL": "Social media"],
                descriptions: [
                    "en-US": "This challenge includes apps and sites like Facebook and Instagram",
                    "nl-NL": "Deze challenge bevat apps en sites zoals Facebook en Instagram",
                ],
                classifierCategories: ["Facebook", "Social Media", "Social Networking Sites", "social"],
                applications: ["com.facebook.katana", "com.instagram.android", "com.twitter.android", "Facebook", "Instagram"],
                mandatoryNoGo: false)),
        Replacement(
            oldID: UUID(uuidString: "0d5863c5-0086-4b42-ae2b-49bd3d144ddc")!,
            category: ActivityCategory(
                id: UUID(uuidString: "90b9838f-1430-484b-94c1-e169318091cb")!,
                names: ["en-US": "Communication", "nl-NL": "Communicatie"],
                descriptions: [
                    "en-US": "This challenge includes apps and sites like WhatsApp and Snapchat",
                    "nl-NL": "Deze challenge bevat apps en sites zoals WhatsApp en Snapchat",
                ],
                classifierCategories: ["Chat", "Webmail"],
                applications: [
                    "com.whatsapp", "com.google.android.gm", "com.skype.raider", "com.facebook.orca",
                    "com.snapchat.android", "WhatsApp",
                ], mandatoryNoGo: false)),
        Replacement(
            oldID: UUID(uuidString: "230ca714-8200-4890-a66b-3c11a317afc2")!,
            category: ActivityCategory(
                id: UUID(uuidString: "eb7be352-b449-4d30-98fe-3be6ad555b43")!,
                names: ["en-US": "Multimedia", "nl-NL": "Multimedia"],
                descriptions: [
                    "en-US": "This challenge includes apps and sites like Youtube and Netflix",
                    "nl-NL": "Deze challenge bevat apps en sites zoals Youtube en Netflix",
                ],
                classifierCategories: ["YouTube", "Netflix"],
                applications: ["nl.uitzendinggemist", "com.google.android.youtube", "com.netflix.mediaclient", "YouTube", "Netflix"],
                mandatoryNoGo: false)),
        Replacement(
            oldID: UUID(uuidString: "f798c451-7e44-41f0-b655-6bcdcbeaf178")!,
            category: ActivityCategory(
                id: UUID(uuidString: "1f088f0b-9952-4ac7-bdc0-fd242238bc1d")!,
                names: ["en-US": "Adult content", "nl-NL": "Adult"],
                descriptions: [
                    "en-US": "This challenge includes apps and sites with adult and porn",
                    "nl-NL": "Deze challenge bevat apps en sites met adult content en porno",
                ],
                classifierCategories: ["Adult Sites", "Adult Themes", "KS-Adult", "KS-Sexuality", "Sexuality Sites"],
                applications: ["Bad app"], mandatoryNoGo: false)),
    ]

    package func prepare(on database: any Database) async throws {
        try await database.transaction { tx in
            for replacement in Self.replacements {
                // A default the operator removed stays removed.
                guard try await ActivityCategory.find(replacement.oldID, on: tx) != nil else { continue }
                let new = replacement.category
                if try await ActivityCategory.find(new.id, on: tx) == nil {
                    try await ActivityCategory(
                        id: new.id!, names: new.names, descriptions: new.descriptions,
                        classifierCategories: new.classifierCategories, applications: new.applications,
                        mandatoryNoGo: new.mandatoryNoGo
                    ).create(on: tx)
                }
                try await Goal.query(on: tx).filter(\.$activityCategory.$id == replacement.oldID)
                    .set(\.$activityCategory.$id, to: new.id!).update()
                try await ActivityCategory.query(on: tx).filter(\.$id == replacement.oldID).delete()
            }
            for category in try await ActivityCategory.query(on: tx).filter(\.$mandatoryNoGo == true).all() {
                let covered = Set(try await Goal.query(on: tx).filter(\.$activityCategory.$id == category.id!).all(\.$userAnonymized.$id))
                for userAnonymizedID in try await UserAnonymized.query(on: tx).all(\.$id) where !covered.contains(userAnonymizedID) {
                    try await Goal(
                        id: UUID(), userAnonymizedID: userAnonymizedID, activityCategoryID: category.id!, kind: "BudgetGoal",
                        maxDurationMinutes: 0, zones: [], creationTime: Goal.mandatoryCreationTime
                    ).create(on: tx)
                }
            }
        }
    }

    package func revert(on database: any Database) async throws {}
}
