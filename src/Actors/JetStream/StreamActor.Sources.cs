using System.Globalization;
using System.Text;
using Akka.Actor;
using Akka.Event;
using Courier.Actors.Connections;
using Courier.Protocols.JetStream;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// <c>mirror</c> and <c>sources</c> (nats-server setupMirrorConsumer, setupSourceConsumers,
/// processInboundMirrorMsg, processInboundSourceMsg). The origin streams are local (same account,
/// same node), so the stream reads each origin's store directly instead of through a consumer: on
/// each flush of an origin (<see cref="LocalStreams.Notify"/>) and on a 1 s tick, it copies what is
/// new in bounded batches, one store flush per batch.
/// </summary>
/// <remarks>
/// A mirror keeps the origin's sequences and timestamps: gaps (messages the origin deleted, or the
/// filter skipped) are skipped here too, and it resumes after its own last sequence. A source
/// message gets a <c>Nats-Stream-Source: &lt;origin&gt; &lt;origin sequence&gt;</c> header, as
/// nats-server adds it, and goes through the stream's publish checks (dedupe, rollup, republish);
/// on start each source resumes after the last origin sequence its header records.
/// </remarks>
internal sealed partial class StreamActor
{
    /// <summary>How often origins are read without being told (nats-server's sourceHealthCheckInterval).</summary>
    private static readonly TimeSpan OriginCheckInterval = TimeSpan.FromSeconds(1);

    /// <summary>Most messages copied from one origin per turn (other requests are answered in between).</summary>
    private const int CopyBatch = 1024;

    private const string StreamSourceHeader = "Nats-Stream-Source";

    /// <summary>A mirror with fewer messages than this still to copy answers its origin's direct gets (nats-server's dgetCaughtUpThresh).</summary>
    private const ulong MirrorDirectCaughtUp = 10;

    private readonly LocalStreams _streams;
    private Origin? _mirror;
    private readonly List<Origin> _sources = [];
    private bool _copyQueued;

    /// <summary>True when <paramref name="config"/> copies from other streams (a mirror, or sources).</summary>
    internal static bool IsCopying(StreamConfig config) => config.Mirror is not null || config.Sources is { Count: > 0 };

    /// <summary>
    /// Starts following the origins of the current configuration. On start (<paramref name="fromStore"/>)
    /// each resumes from where the store says this stream left off; on an update the sources kept go
    /// on from where they are and an added one starts afresh, as nats-server's update does.
    /// </summary>
    private void StartOrigins(bool fromStore)
    {
        Dictionary<string, Origin> previous = fromStore ? new(StringComparer.Ordinal) : _sources.ToDictionary(o => o.IndexName, StringComparer.Ordinal);
        StopOrigins();
        if (_config.Mirror is { } mirror)
        {
            var last = _store.State().LastSeq;
            _mirror = new Origin(mirror) { Next = last > 0 ? last + 1 : 0 };
            OriginStreams(mirror)?.Follow(mirror.Name, Self);
        }

        if (_config.Sources is { Count: > 0 } sources)
        {
            var resumed = fromStore ? LastSourcedSequences(sources) : new Dictionary<string, ulong>(StringComparer.Ordinal);
            var lastTime = fromStore ? _store.State().LastTime : 0;
            foreach (var source in sources)
            {
                var origin = new Origin(source);
                if (previous.TryGetValue(origin.IndexName, out var kept))
                {
                    origin.Next = kept.Next;
                    origin.StartTime = kept.StartTime;
                }
                else if (resumed.TryGetValue(origin.IndexName, out var sequence))
                {
                    origin.Next = sequence + 1;
                }
                else if (source.OptStartSeq == 0 && source.OptStartTime is null && lastTime > 0)
                {
                    // As nats-server: a source with nothing of its own left here starts from this stream's last time.
                    origin.StartTime = lastTime;
                }

                _sources.Add(origin);
                OriginStreams(source)?.Follow(source.Name, Self);
            }
        }

        if (_mirror is not null || _sources.Count > 0)
        {
            Timers.StartPeriodicTimer("origins", Protocol.OriginAdvanced.Instance, OriginCheckInterval);
            QueueCopy();
        }
    }

    private void StopOrigins()
    {
        if (_mirror is not null)
        {
            OriginStreams(_mirror.Config)?.Unfollow(_mirror.Name, Self);
            _mirror = null;
        }

        foreach (var source in _sources)
        {
            OriginStreams(source.Config)?.Unfollow(source.Name, Self);
        }

        _sources.Clear();
        Timers.Cancel("origins");
    }

    /// <summary>
    /// The last origin sequence each source's <c>Nats-Stream-Source</c> header records, newest first
    /// (nats-server's startingSequenceForSources: a reverse scan that stops once every source is found).
    /// </summary>
    private Dictionary<string, ulong> LastSourcedSequences(List<StreamSource> sources)
    {
        var found = new Dictionary<string, ulong>(StringComparer.Ordinal);
        var state = _store.State();
        if (state.Msgs == 0)
        {
            return found;
        }

        var wanted = sources.Select(IndexNameOf).ToHashSet(StringComparer.Ordinal);
        for (var seq = state.LastSeq; seq >= state.FirstSeq && seq > 0 && found.Count < wanted.Count; seq--)
        {
            if (_store.LoadMessage(seq) is not { Found: true, Message: { Headers.IsEmpty: false } m } ||
                NatsHeaders.Get(m.Headers.Span, StreamSourceHeader) is not { } header)
            {
                continue;
            }

            var space = header.IndexOf(' ', StringComparison.Ordinal);
            if (space > 0 && wanted.Contains(header[..space]) && !found.ContainsKey(header[..space]) &&
                ulong.TryParse(header.AsSpan(space + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var sequence))
            {
                found[header[..space]] = sequence;
            }
        }

        return found;
    }

    private void QueueCopy()
    {
        if (!_copyQueued)
        {
            _copyQueued = true;
            Self.Tell(Protocol.CopyFromOrigins.Instance);
        }
    }

    /// <summary>Copies what is new in each origin (a bounded batch each), then flushes once and tells who follows this stream.</summary>
    private void CopyFromOrigins()
    {
        _copyQueued = false;
        var copied = 0;
        var more = false;
        if (_mirror is { } mirror)
        {
            more |= Copy(mirror, isMirror: true, ref copied);
        }

        foreach (var source in _sources)
        {
            more |= Copy(source, isMirror: false, ref copied);
        }

        if (copied > 0)
        {
            _store.Flush();
            foreach (var consumer in _consumers.Actors)
            {
                consumer.Tell(ConsumerActor.Protocol.NewMessages.Instance);
            }

            SendRepublished();
            _streams.Notify(_config.Name);
        }

        if (more)
        {
            QueueCopy();
        }
    }

    /// <summary>Copies up to <see cref="CopyBatch"/> new messages of <paramref name="origin"/>; true when it has more.</summary>
    private bool Copy(Origin origin, bool isMirror, ref int copied)
    {
        if (OriginStreams(origin.Config) is not { } streams)
        {
            // An external API prefix that reaches no account here: as nats-server shows an origin whose
            // API does not answer (its consumer create goes unanswered): no error, never active, nothing copied.
            return false;
        }

        if (streams.Find(origin.Name) is not { } store)
        {
            origin.Error = ApiError.StreamNotFound; // as nats-server reports a consumer create on a missing origin
            return false;
        }

        origin.Error = null;
        origin.LastActive = DateTime.UtcNow;
        if (origin.Next == 0)
        {
            origin.Next = origin.Config.OptStartSeq > 0 ? origin.Config.OptStartSeq
                : origin.Config.OptStartTime is { } time ? store.GetSequenceFromTime((time.ToUniversalTime() - DateTime.UnixEpoch).Ticks * 100)
                : origin.StartTime > 0 ? store.GetSequenceFromTime(origin.StartTime)
                : 1;
        }

        // One filter is the store's to apply; several (2.10's subject_transforms) are matched here.
        var filters = origin.Filters;
        var filter = filters.Length == 1 ? filters[0].Filter : null;
        var more = true;
        for (var n = 0; n < CopyBatch; n++)
        {
            var next = store.LoadNextMessage(filter, origin.Next);
            if (next is not { Found: true, Message: { } m })
            {
                more = false;
                break;
            }

            origin.Next = m.Sequence + 1;
            if (origin.Map(m.Subject) is not { } subject)
            {
                continue;
            }

            if (isMirror)
            {
                StoreMirrored(m, subject);
            }
            else
            {
                StoreSourced(origin, m, subject);
            }

            copied++;
        }

        origin.Lag = !more ? 0 : filters.Length == 0 ? store.FilteredState(origin.Next, null).Msgs : filters.Aggregate(0UL, (sum, f) => sum + store.FilteredState(origin.Next, f.Filter).Msgs);
        if (isMirror && _config.MirrorDirect && !origin.AnswersDirectGets && origin.Lag < MirrorDirectCaughtUp && _store.State().LastSeq > 0)
        {
            SubscribeMirrorDirect(origin);
        }

        return origin.Lag > 0;
    }

    /// <summary>
    /// Where the origin's store is found: this account's streams, or for an <c>external</c> origin the
    /// streams of the account whose <c>$JS.API.&gt;</c> this account imports under the API prefix (where
    /// nats-server would create its consumer); null when the prefix reaches no account here. As
    /// nats-server 2.9, a prefix of this server's own domain is not served to a stream's requests.
    /// </summary>
    private LocalStreams? OriginStreams(StreamSource config) =>
        config.External is not { } external ? _streams : _streams.External(external.ApiPrefix);

    /// <summary>
    /// <c>mirror_direct</c> (nats-server subscribeToMirrorDirect): once the mirror has nearly caught
    /// up, it answers its origin's direct gets too, as another member of the origin's <c>_dg</c>
    /// queue group, from its own store (the reply's Nats-Stream names the mirror). It keeps answering
    /// while it runs, even when the origin is gone.
    /// </summary>
    private void SubscribeMirrorDirect(Origin mirror)
    {
        mirror.AnswersDirectGets = true;
        SubscribeDirectGets(mirror.Name);
    }

    /// <summary>
    /// Stores an origin message at the origin's sequence (processInboundMirrorMsg): an empty mirror
    /// starts at it; a gap is skipped as nats-server's skipMsgs does (the store has no skip record, so
    /// each skipped sequence is appended and removed before the flush, as interest retention does).
    /// </summary>
    private void StoreMirrored(StoredMessage m, string mapped)
    {
        var state = _store.State();
        if (m.Sequence <= state.LastSeq)
        {
            return; // already here
        }

        var subject = Encoding.UTF8.GetBytes(mapped);
        if (m.Sequence > state.LastSeq + 1)
        {
            if (state.Msgs == 0)
            {
                _store.Compact(m.Sequence);
            }
            else
            {
                for (var skip = state.LastSeq + 1; skip < m.Sequence; skip++)
                {
                    var placeholder = _store.Append(subject, default, default, m.Timestamp);
                    if (!placeholder.Ok)
                    {
                        break;
                    }

                    _store.RemoveMessage(placeholder.Sequence);
                }
            }
        }

        var result = _store.Append(subject, m.Headers.Span, m.Payload.Span, m.Timestamp);
        if (!result.Ok)
        {
            _log.Warning("mirror {0} could not store {1} #{2}: {3}", _config.Name, m.Subject, m.Sequence, result.Error.Describe());
        }
    }

    /// <summary>Stores an origin message with its <c>Nats-Stream-Source</c> header through the publish checks (processInboundSourceMsg).</summary>
    private void StoreSourced(Origin origin, StoredMessage m, string mapped)
    {
        var headers = NatsHeaders.Set(m.Headers.Span, StreamSourceHeader, origin.IndexName + " " + m.Sequence.ToString(CultureInfo.InvariantCulture));
        // The source's transform first, then the stream's own subject_transform (nats-server 2.10's order).
        if (AppendChecked(Ingested(new InternalMessage(mapped, null, headers, m.Payload.ToArray())), out _, sourced: true, originSubject: m.Subject) is { Error: { } error })
        {
            _log.Warning("stream {0} could not store {1} #{2} from source {3}: {4}", _config.Name, m.Subject, m.Sequence, origin.Name, error.Description);
        }
    }

    /// <summary>
    /// How a source names itself in the <c>Nats-Stream-Source</c> header (nats-server 2.9's iname): the
    /// stream's name, and for an external one <c>:</c> and an 8-character hash of the API prefix, since
    /// the same name may stand for streams of several domains.
    /// </summary>
    private static string IndexNameOf(StreamSource source) =>
        source.External is { } external ? source.Name + ":" + PrefixHash(external.ApiPrefix) : source.Name;

    // nats-server's getHash: the first 8 bytes of the name's SHA-256, each as a base-62 digit.
    private static string PrefixHash(string name)
    {
        const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        Span<byte> sha = stackalloc byte[32];
        System.Security.Cryptography.SHA256.HashData(Encoding.UTF8.GetBytes(name), sha);
        Span<char> hash = stackalloc char[8];
        for (var i = 0; i < hash.Length; i++)
        {
            hash[i] = Digits[sha[i] % Digits.Length];
        }

        return new string(hash);
    }

    /// <summary>STREAM.INFO's <c>mirror</c> / <c>sources</c> entry.</summary>
    private static StreamSourceInfo SourceInfo(Origin origin) => new()
    {
        Name = origin.Name,
        Lag = origin.Lag,
        Active = origin.LastActive == default ? -1 : (DateTime.UtcNow - origin.LastActive).Ticks * 100,
        Error = origin.Error,
        External = origin.Config.External is { } external ? new ExternalStream { ApiPrefix = external.ApiPrefix, DeliverPrefix = external.DeliverPrefix } : null,
        FilterSubject = string.IsNullOrEmpty(origin.Config.FilterSubject) ? null : origin.Config.FilterSubject,
        SubjectTransforms = origin.Config.SubjectTransforms is { Count: > 0 } transforms
            ? [.. transforms.Select(t => new SubjectTransformConfig { Source = t.Source ?? "", Destination = t.Destination })]
            : null,
    };

    private void AddOriginInfo(StreamInfoResponse info)
    {
        info.Mirror = _mirror is null ? null : SourceInfo(_mirror);
        info.Sources = _sources.Count == 0 ? null : [.. _sources.Select(SourceInfo)];
    }

    /// <summary>Where a mirror or a source has got to.</summary>
    private sealed class Origin(StreamSource config)
    {
        public StreamSource Config { get; } = config;

        public string Name => Config.Name;

        /// <summary>The source's name in its <c>Nats-Stream-Source</c> headers.</summary>
        public string IndexName { get; } = IndexNameOf(config);

        /// <summary>
        /// What is copied: none (everything), the <c>filter_subject</c>, or one per 2.10 <c>subject_transforms</c>
        /// entry, each with the transform that maps what it takes (null: kept as it is).
        /// </summary>
        public (string Filter, SubjectTransform? Transform)[] Filters { get; } =
            config.SubjectTransforms is { Count: > 0 } transforms
                ? [.. transforms.Select(t => (string.IsNullOrEmpty(t.Source) ? ">" : t.Source, t.Destination.Length > 0 ? StreamConfigRules.TransformOf(t) : null))]
                : string.IsNullOrEmpty(config.FilterSubject) ? [] : [(config.FilterSubject, null)];

        /// <summary>True once this mirror answers its origin's direct gets (<c>mirror_direct</c>).</summary>
        public bool AnswersDirectGets { get; set; }

        /// <summary>The subject <paramref name="subject"/> is stored under here, or null when no filter takes it.</summary>
        public string? Map(string subject)
        {
            if (Filters.Length == 0)
            {
                return subject;
            }

            foreach (var (filter, transform) in Filters)
            {
                if (SubjectRules.Matches(subject, filter))
                {
                    return transform?.Apply(subject) ?? subject;
                }
            }

            return null;
        }

        /// <summary>The origin sequence to read next; 0 until the start is resolved against the origin's store.</summary>
        public ulong Next { get; set; }

        /// <summary>Unix ns to start from when nothing else says where (a restart that finds none of this source's messages).</summary>
        public long StartTime { get; set; }

        public ulong Lag { get; set; }

        public DateTime LastActive { get; set; }

        public ApiError? Error { get; set; }
    }
}
