using System.Text.Json;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>STREAM.INFO with its request's details (nats-server jsStreamInfoRequest).</summary>
internal sealed partial class StreamActor
{
    /// <summary>Most subjects one STREAM.INFO lists in <c>state.subjects</c> (nats-server's JSMaxSubjectDetails).</summary>
    private const int MaxSubjectDetails = 100_000;

    /// <summary>
    /// The info, with the deleted sequences when <c>deleted_details</c> is set, and a page (from
    /// <c>offset</c>, sorted) of the per-subject counts of the subjects matching <c>subjects_filter</c>;
    /// <c>total</c>/<c>offset</c>/<c>limit</c> describe that page, 0 without one, as nats-server.
    /// </summary>
    private StreamInfoResponse DetailedInfo(byte[] payload)
    {
        var info = Info("io.nats.jetstream.api.v1.stream_info_response");
        info.Total = 0;
        info.Offset = 0;
        info.Limit = 0;
        if (payload.AsSpan().Trim(" \t\r\n"u8).IsEmpty)
        {
            return info;
        }

        var request = JsonSerializer.Deserialize(payload, JetStreamJsonContext.Default.StreamInfoRequest);
        if (request is null)
        {
            return info;
        }

        if (request.DeletedDetails && _store.DeletedSequences() is { Length: > 0 } deleted)
        {
            info.State!.Deleted = deleted;
        }

        if (string.IsNullOrEmpty(request.SubjectsFilter))
        {
            return info;
        }

        var subjects = _store.SubjectsState(request.SubjectsFilter);
        if (subjects.Count == 0)
        {
            return info;
        }

        var names = subjects.Keys.ToArray();
        Array.Sort(names, StringComparer.Ordinal);
        var offset = Math.Clamp(request.Offset, 0, names.Length);
        var end = Math.Min(offset + MaxSubjectDetails, names.Length);
        if (end > offset)
        {
            var page = new SortedDictionary<string, ulong>(StringComparer.Ordinal);
            for (var i = offset; i < end; i++)
            {
                page[names[i]] = subjects[names[i]].Msgs;
            }

            info.State!.Subjects = page;
        }

        info.Total = names.Length;
        info.Offset = offset;
        info.Limit = MaxSubjectDetails;
        return info;
    }
}
