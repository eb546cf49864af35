import Foundation

/// What the store writes (``LabStore/RunRecord``) and reads back (``LabStore/RunRow``, ``LabStore/FrameRow``).
extension LabStore {
    /// What is known of a run when it starts.
    public struct RunStart: Sendable {
        public var experiment: String
        public var clip: String
        /// The settings as JSON text.
        public var settingsJSON: String
        public var crop: String?
        public var ffmpegVersion: String?
        public var width: Int
        public var height: Int
        public var fpsNum: Int
        public var fpsDen: Int

        public init(experiment: String, clip: String, settingsJSON: String, crop: String?, ffmpegVersion: String?,
                    width: Int, height: Int, fpsNum: Int, fpsDen: Int) {
            self.experiment = experiment
            self.clip = clip
            self.settingsJSON = settingsJSON
            self.crop = crop
            self.ffmpegVersion = ffmpegVersion
            self.width = width
            self.height = height
            self.fpsNum = fpsNum
            self.fpsDen = fpsDen
        }
    }

    /// One picture of an independent decode, as the `decoded_frames` table holds it: the verify stage's value,
    /// written as given.
    public typealias DecodedFrameRecord = DecodedFrame

    /// Everything recorded of one run, written at once by ``recordRun(_:replacing:beforeCommit:)``.
    public struct RunRecord: Sendable {
        /// What was known when the run started (experiment, clip, settings as given, picture size, rate).
        public var start: RunStart
        /// When the run started (`runs.created_at`); `runs.finished_at` is the time of the write.
        public var createdAt: Date
        /// Warnings reported during the run (x264's, a partial last frame), in order; stored for either status
        /// as a JSON array, NULL when there are none.
        public var warnings: [String]
        public var outcome: Outcome
        /// The run's identity (`runs.run_key`): 64 lowercase hex digits (a SHA-256), or nil. Among `done` runs a
        /// key is stored once (see ``LabStore/recordRun(_:replacing:beforeCommit:)``).
        public var runKey: String?
        /// The hex SHA-256 of the clip file's bytes (`runs.clip_sha256`; 64 lowercase hex digits), or nil.
        public var clipSHA256: String?
        /// `runs.x264_version`: the libx264 that made the stream (`X264_POINTVER`), nil for a stream from elsewhere.
        public var x264Version: String?
        /// `runs.repeatable`: whether the encode writes the same bytes every time (``RunSpec/repeatable``), nil for a
        /// stream the lab did not encode. A done run that is not repeatable may be stored beside other done runs of
        /// its key (repeats).
        public var repeatable: Bool? = nil

        /// The stream's final path for a run id (e.g. `{ "OUT/run-\($0)/stream.264" }`): stored as `runs.stream_path`
        /// of a done run, called once inside the transaction; nil stores NULL.
        public var streamPath: (@Sendable (Int64) -> String)? = nil

        /// How the run ended: `done` with everything it measured (written as given; the encoded picture size is
        /// `start.width` × `start.height`), or `failed` with the error's message.
        public enum Outcome: Sendable {
            case done(RunMeasurements)
            /// A failed run keeps its `runs` row only (no frames, no checks): `error` is the one-line message.
            case failed(error: String)
        }

        public init(start: RunStart, createdAt: Date, warnings: [String], outcome: Outcome, runKey: String? = nil,
                    clipSHA256: String? = nil, x264Version: String? = EncoderLab.x264Version) {
            self.start = start
            self.createdAt = createdAt
            self.warnings = warnings
            self.outcome = outcome
            self.runKey = runKey
            self.clipSHA256 = clipSHA256
            self.x264Version = x264Version
        }
    }

    /// A stored frame row, as analysis and plots read it back. Nullable columns read NULL as nil.
    public struct FrameRow: Sendable {
        public var codedIndex: Int
        public var displayIndex: Int
        public var type: String
        public var sizeBytes: Int
        public var pts: Int64
        public var dts: Int64
        /// The frame's average QP; nil for a stream that x264 did not make (`frames.qp` NULL).
        public var qp: Double?
        /// The lab's PSNR of Y and of all three planes together (`frames.psnr_y`, `frames.psnr_avg`), in dB; nil
        /// where the frame decodes without error or has no independent decode.
        public var psnrY: Double?
        public var psnrAvg: Double?
        /// x264's luma SSIM (`frames.ssim`, docs/schema.md); nil when x264 computed none.
        public var ssim: Double?

        public init(codedIndex: Int, displayIndex: Int, type: String, sizeBytes: Int, pts: Int64, dts: Int64, qp: Double?,
                    psnrY: Double?, psnrAvg: Double?, ssim: Double?) {
            self.codedIndex = codedIndex
            self.displayIndex = displayIndex
            self.type = type
            self.sizeBytes = sizeBytes
            self.pts = pts
            self.dts = dts
            self.qp = qp
            self.psnrY = psnrY
            self.psnrAvg = psnrAvg
            self.ssim = ssim
        }
    }

    /// A stored `runs` row (docs/schema.md); a NULL column reads as nil.
    public struct RunRow: Sendable {
        public var runID: Int64
        /// The run's identity, 64 lowercase hex digits; nil for a run migrated from schema version 1 or older.
        public var runKey: String?
        public var experiment: String
        public var clip: String
        /// The hex SHA-256 of the clip's bytes; nil for a run migrated from schema version 1 or older.
        public var clipSHA256: String?
        /// The settings as JSON text.
        public var settingsJSON: String
        /// `done` or `failed` (a run an older enclab left `running` is `failed` with
        /// ``LabStore/interruptedRunError``).
        public var status: String
        public var frames: Int?
        public var bytes: Int?
        public var durationSeconds: Double?
        public var timebaseNum: Int?
        public var timebaseDen: Int?
        public var streamPath: String?
        public var crop: String?
        /// nil for a stream that x264 did not make.
        public var x264Version: String?
        public var labVersion: String
        public var ffmpegVersion: String?
        /// `{"cpu": "...", "cores": N}`.
        public var machineJSON: String
        /// ISO-8601 UTC, e.g. "2026-11-29T22:27:02Z".
        public var createdAt: String
        public var finishedAt: String?
        public var width: Int?
        public var height: Int?
        public var fpsNum: Int?
        public var fpsDen: Int?
        public var inputFrames: Int?
        public var truncatedBytes: Int?
        /// The warnings as a JSON array of strings.
        public var warningsJSON: String?
        public var error: String?
        /// Whether the run's encode writes the same bytes every time (`runs.repeatable`, ``Repeatability``); nil for
        /// a stream the lab did not encode, or a database older than schema version 7 read as it is.
        public var repeatable: Bool? = nil

        public init(runID: Int64, runKey: String? = nil, experiment: String, clip: String, clipSHA256: String? = nil,
                    settingsJSON: String, status: String, frames: Int?, bytes: Int?, durationSeconds: Double?,
                    timebaseNum: Int?, timebaseDen: Int?, streamPath: String?, crop: String?, x264Version: String?,
                    labVersion: String, ffmpegVersion: String?, machineJSON: String, createdAt: String, finishedAt: String?,
                    width: Int?, height: Int?, fpsNum: Int?, fpsDen: Int?, inputFrames: Int?, truncatedBytes: Int?,
                    warningsJSON: String?, error: String?) {
            self.runID = runID
            self.runKey = runKey
            self.experiment = experiment
            self.clip = clip
            self.clipSHA256 = clipSHA256
            self.settingsJSON = settingsJSON
            self.status = status
            self.frames = frames
            self.bytes = bytes
            self.durationSeconds = durationSeconds
            self.timebaseNum = timebaseNum
            self.timebaseDen = timebaseDen
            self.streamPath = streamPath
            self.crop = crop
            self.x264Version = x264Version
            self.labVersion = labVersion
            self.ffmpegVersion = ffmpegVersion
            self.machineJSON = machineJSON
            self.createdAt = createdAt
            self.finishedAt = finishedAt
            self.width = width
            self.height = height
            self.fpsNum = fpsNum
            self.fpsDen = fpsDen
            self.inputFrames = inputFrames
            self.truncatedBytes = truncatedBytes
            self.warningsJSON = warningsJSON
            self.error = error
        }

        /// Reads a `SELECT * FROM runs` row by column name.
        /// - Throws: `.data` when a NOT NULL column holds NULL or the wrong type, naming the file and column.
        init(_ row: Row) throws {
            runID = try row.integer("run_id")
            // Every later message of a damaged column names the run.
            let r = row.at("run \(runID)")
            func int(_ name: String) -> Int? { r[name].int.map { Int($0) } }
            runKey = r["run_key"].string
            experiment = try r.text("experiment")
            clip = try r.text("clip")
            clipSHA256 = r["clip_sha256"].string
            settingsJSON = try r.text("settings")
            status = try r.text("status")
            frames = int("frames")
            bytes = int("bytes")
            durationSeconds = r["duration_s"].double
            timebaseNum = int("timebase_num")
            timebaseDen = int("timebase_den")
            streamPath = r["stream_path"].string
            crop = r["crop"].string
            x264Version = r["x264_version"].string
            labVersion = try r.text("lab_version")
            ffmpegVersion = r["ffmpeg_version"].string
            machineJSON = try r.text("machine")
            createdAt = try r.text("created_at")
            finishedAt = r["finished_at"].string
            width = int("width")
            height = int("height")
            fpsNum = int("fps_num")
            fpsDen = int("fps_den")
            inputFrames = int("input_frames")
            truncatedBytes = int("truncated_bytes")
            warningsJSON = r["warnings"].string
            error = r["error"].string
            repeatable = r.has("repeatable") ? r["repeatable"].int.map { $0 != 0 } : nil
        }
    }
}
