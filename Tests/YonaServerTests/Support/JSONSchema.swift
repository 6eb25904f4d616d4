import Foundation

@testable import YonaAPI

/// A JSON value with its type kept exactly (JSONSerialization on Linux blurs booleans and numbers).
enum JSONValue: Decodable, Equatable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    static func parse(_ data: Data) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: data) }
}

/// A small JSON Schema (2020-12) checker for the keywords our `Schemas/` use: type, required, properties,
/// additionalProperties, items, enum, const, pattern, minLength, maxLength, minimum, maximum, maxProperties.
/// It refuses a schema that uses any other keyword, so a schema cannot silently outgrow it.
struct JSONSchema {
    let root: JSONValue

    static func load(_ name: String) throws -> JSONSchema {
        JSONSchema(root: try JSONValue.parse(Data(contentsOf: projectRoot.appendingPathComponent("Schemas/\(name)"))))
    }

    static let projectRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every violation, with the JSON path where it is; empty when the value conforms.
    func violations(of data: Data) -> [String] {
        guard let value = try? JSONValue.parse(data) else { return ["$: not JSON"] }
        var found: [String] = []
        check(value, against: root, at: "$", into: &found)
        return found
    }

    private static let known: Set<String> = [
        "$schema", "$id", "title", "description", "type", "required", "properties", "additionalProperties",
        "items", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum", "maxProperties",
    ]

    private func check(_ value: JSONValue, against schemaValue: JSONValue, at path: String, into found: inout [String]) {
        guard case .object(let schema) = schemaValue else {
            found.append("\(path): schema is not an object")
            return
        }
        for key in schema.keys where !Self.known.contains(key) { found.append("\(path): schema keyword \(key) is not supported") }
        if case .string(let type)? = schema["type"], !Self.matches(value, type: type) {
            found.append("\(path): expected \(type)")
            return
        }
        if case .array(let allowed)? = schema["enum"], !allowed.contains(value) { found.append("\(path): not an allowed value") }
        if let constant = schema["const"], constant != value { found.append("\(path): not the constant value") }
        switch value {
        case .string(let text):
            if case .string(let pattern)? = schema["pattern"], text.range(of: pattern, options: .regularExpression) == nil {
                found.append("\(path): does not match \(pattern)")
            }
            if case .number(let min)? = schema["minLength"], Double(text.count) < min { found.append("\(path): too short") }
            if case .number(let max)? = schema["maxLength"], Double(text.count) > max { found.append("\(path): too long") }
        case .number(let number):
            if case .number(let min)? = schema["minimum"], number < min { found.append("\(path): below \(min)") }
            if case .number(let max)? = schema["maximum"], number > max { found.append("\(path): above \(max)") }
        case .object(let object):
            if case .array(let required)? = schema["required"] {
                for case .string(let key) in required where object[key] == nil { found.append("\(path): missing \(key)") }
            }
            if case .number(let max)? = schema["maxProperties"], Double(object.count) > max { found.append("\(path): too many properties") }
            var properties: [String: JSONValue] = [:]
            if case .object(let declared)? = schema["properties"] { properties = declared }
            for (key, member) in object {
                if let sub = properties[key] {
                    check(member, against: sub, at: "\(path).\(key)", into: &found)
                } else if case .bool(false)? = schema["additionalProperties"] {
                    found.append("\(path): unexpected property \(key)")
                } else if let additional = schema["additionalProperties"], case .object = additional {
                    check(member, against: additional, at: "\(path).\(key)", into: &found)
                }
            }
        case .array(let items):
            if let itemSchema = schema["items"] {
                for (index, item) in items.enumerated() { check(item, against: itemSchema, at: "\(path)[\(index)]", into: &found) }
            }
        case .bool, .null:
            break
        }
    }

    private static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null), ("number", .number):
            true
        case ("integer", .number(let n)):
            n == n.rounded()
        default:
            false
        }
    }
}

/// The schemas of `openapi.yaml`'s components, checked by `scripts/lib/openapi-schema-check.py` (the `jsonschema`
/// package that `scripts/test` installs with the OpenAPI validator): real responses are held to the written contract.
enum OpenAPISchema {
    /// What is wrong with `body` as a `name`; nil when it conforms.
    static func violation(of body: Data, as name: String) throws -> String? {
        let compact = try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: body))
        let script = JSONSchema.projectRoot.appendingPathComponent("scripts/lib/openapi-schema-check.py").path
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("yona-schema-\(UUID().uuidString)").path
        defer { for suffix in [".in", ".out"] { try? FileManager.default.removeItem(atPath: base + suffix) } }
        try (Data("\(name)\t".utf8) + compact + Data("\n".utf8)).write(to: URL(fileURLWithPath: base + ".in"))
        let status = try ChildProcess(
            "python3", [script, JSONSchema.projectRoot.appendingPathComponent("openapi.yaml").path], input: base + ".in", output: base + ".out"
        ).wait()
        let answer = String(decoding: FileManager.default.contents(atPath: base + ".out") ?? Data(), as: UTF8.self)
        let line = answer.trimmingCharacters(in: .whitespacesAndNewlines)
        guard status == 0 else { throw TestSetupError(description: "openapi-schema-check failed: \(line)") }
        return line == "ok" ? nil : line
    }
}
