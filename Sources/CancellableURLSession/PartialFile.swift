import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a download is written until it succeeds: a hidden file next to the destination. A file already at the
/// destination survives a download that fails or is cancelled, and is replaced in one step — a rename within
/// the directory — when it succeeds.
struct PartialFile: Sendable {
    /// The hidden file: `.<name>.<UUID>.partial`, in the destination's directory.
    let url: URL
    /// Where the download goes once it succeeds.
    let destination: URL

    /// Creates the partial file, and opens it for writing.
    ///
    /// - Throws: the file system's error if the destination is a directory or its directory cannot be written:
    ///   before any request is sent.
    static func create(for destination: URL) throws -> (PartialFile, FileHandle) {
        let name = ".\(destination.lastPathComponent).\(UUID().uuidString).partial"
        let file = PartialFile(
            url: destination.deletingLastPathComponent().appendingPathComponent(name),
            destination: destination
        )
        return (file, try file.open(keeping: 0))
    }

    /// Opens the partial file of a paused download to continue it: keeps its first `bytes` bytes and opens it for
    /// writing after them. A partial file that is gone or shorter than `bytes` is (re)created empty.
    ///
    /// - Returns: the file, its handle, and how many bytes it kept (`bytes` or 0).
    static func reopen(
        _ url: URL,
        for destination: URL,
        keeping bytes: Int64
    ) throws -> (PartialFile, FileHandle, Int64) {
        let file = PartialFile(url: url, destination: destination)
        let size = (try? size(of: url)) ?? -1
        let kept = bytes > 0 && size >= bytes ? bytes : 0
        return (file, try file.open(keeping: kept), kept)
    }

    /// Opens the file for writing after its first `kept` bytes, creating it if needed and dropping anything after.
    private func open(keeping kept: Int64) throws -> FileHandle {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: destination.path])
        }
        if kept == 0 || !FileManager.default.fileExists(atPath: url.path) {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: destination.path])
            }
        }
        do {
            let handle = try FileHandle(forWritingTo: url)
            try Self.truncate(handle, at: kept)
            return handle
        } catch {
            remove()
            throw error
        }
    }

    /// The size in bytes of the file at `url` (-1 if the file system does not say).
    static func size(of url: URL) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? -1
    }

    /// The bytes of the file at `url`.
    ///
    /// An empty file gives empty data without being read: Linux's Foundation (swift-corelibs, Swift 6.3) leaks the
    /// 4 KiB buffer `Data(contentsOf:)` allocates for a file of size 0.
    static func contents(of url: URL) throws -> Data {
        try size(of: url) == 0 ? Data() : Data(contentsOf: url)
    }

    /// Cuts the file open in `handle` to `offset` bytes and moves the write position there.
    static func truncate(_ handle: FileHandle, at offset: Int64) throws {
        try handle.truncate(atOffset: UInt64(offset))
        try handle.seek(toOffset: UInt64(offset))
    }

    /// Moves `source` (a file the session downloaded elsewhere, possibly on another volume) into the partial file.
    func fill(from source: URL) throws {
        remove()
        try FileManager.default.moveItem(at: source, to: url)
    }

    /// Renames the partial file over the destination, atomically; on failure, removes it and throws.
    func commit() throws {
        guard rename(url.path, destination.path) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            remove()
            throw POSIXError(code)
        }
    }

    /// Removes the partial file, if it is there.
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
