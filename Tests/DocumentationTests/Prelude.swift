// Stand-ins for the names the articles use without defining them (a user, a button, URLs…), so that every
// article's code compiles exactly as printed. See scripts/extract-snippets.py.
import Cancellable
import Foundation
import PromiseCore

struct User: Sendable {
    let name: String
    let friendIDs: [Int]
}

/// The callback API the README wraps in `fetchUser(id:)`, which the articles call: the README's definition, compiled
/// from README.md, is the only one.
final class API: Sendable {
    func get(_ path: String, completion: @escaping @Sendable (User?, Error?) -> Void) {
        completion(User(name: path, friendIDs: []), nil)
    }
}
let api = API()

func loadUser(id: Int) async throws -> User {
    User(name: "user \(id)", friendIDs: [])
}

func show(_ value: Any) {}
func report(_ error: Error) {}
func install(from file: URL) {}
func showNotFound() {}
func offerRetry() {}

final class Button: Sendable {
    func onTap(_ action: @escaping () -> Void) {}
}

let stopButton = Button()
let exampleURL = URL(string: "http://127.0.0.1:9/")!
let url = exampleURL
let isoURL = exampleURL
let uploadURL = exampleURL
let primary = exampleURL
let europe = exampleURL
let asia = exampleURL
let mirrors = [primary, europe, asia]
let photo = Data()
let file = FileManager.default.temporaryDirectory.appendingPathComponent("example.iso")
let destination = file
