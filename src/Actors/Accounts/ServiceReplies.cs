using System.Security.Cryptography;
using Courier.Actors.Server;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Accounts;

/// <summary>
/// An exporting account's requests in flight through its service exports: each got a reply subject
/// <c>_R_.&lt;account prefix&gt;.&lt;random&gt;</c> in this account, which maps back to the importer and
/// the requester's own reply subject (nats-server's response service imports).
/// </summary>
/// <remarks>
/// A singleton response removes its entry; streamed and chunked ones stay until they are older
/// than <see cref="ResponseThreshold"/>, swept while new requests come in. One lock, never held
/// across I/O or another lock.
/// </remarks>
internal sealed class ServiceReplies
{
    /// <summary>How long a request waits for its responses (nats-server's default response threshold).</summary>
    internal static readonly TimeSpan ResponseThreshold = TimeSpan.FromMinutes(2);

    private const int SweepEvery = 1024; // requests between sweeps of expired entries
    private const string Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"; // nats-server's base-62 digits
    private const int RandomLength = 10; // characters of the per-request token

    private readonly Lock _lock = new();
    private readonly Dictionary<byte[], PendingResponse> _pending = new(SubjectBytesComparer.Instance);
    private readonly Dictionary<byte[], PendingResponse>.AlternateLookup<ReadOnlySpan<byte>> _lookup;
    private int _sinceSweep;

    public ServiceReplies()
    {
        _lookup = _pending.GetAlternateLookup<ReadOnlySpan<byte>>();
        Prefix = "_R_." + RandomToken(6) + ".";
    }

    /// <summary>This account's reply prefix, with its trailing dot; the account subscribes to it plus <c>&gt;</c>.</summary>
    public string Prefix { get; }

    /// <summary>Requests waiting for a response.</summary>
    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _pending.Count;
            }
        }
    }

    /// <summary>A new reply subject for a request whose responses go to <paramref name="reply"/> in <paramref name="importer"/>.</summary>
    public byte[] Add(Account importer, ReadOnlySpan<byte> reply, ServiceResponseType type)
    {
        var subject = System.Text.Encoding.ASCII.GetBytes(Prefix + RandomToken(RandomLength));
        var entry = new PendingResponse(importer, reply.ToArray(), type, Environment.TickCount64);
        lock (_lock)
        {
            if (++_sinceSweep >= SweepEvery)
            {
                _sinceSweep = 0;
                Sweep(Environment.TickCount64);
            }

            _pending[subject] = entry;
        }

        return subject;
    }

    /// <summary>The request a response on <paramref name="subject"/> answers; a singleton's entry is removed.</summary>
    public bool TryTake(ReadOnlySpan<byte> subject, out PendingResponse entry)
    {
        lock (_lock)
        {
            if (!_lookup.TryGetValue(subject, out entry!))
            {
                return false;
            }

            var expired = Environment.TickCount64 - entry.CreatedTick > (long)ResponseThreshold.TotalMilliseconds;
            if (expired || entry.Type == ServiceResponseType.Singleton)
            {
                _lookup.Remove(subject);
            }

            return !expired;
        }
    }

    /// <summary>Forgets a request nobody in the exporter received.</summary>
    public void Remove(byte[] subject)
    {
        lock (_lock)
        {
            _pending.Remove(subject);
        }
    }

    private void Sweep(long now)
    {
        List<byte[]>? expired = null;
        foreach (var (key, entry) in _pending)
        {
            if (now - entry.CreatedTick > (long)ResponseThreshold.TotalMilliseconds)
            {
                (expired ??= []).Add(key);
            }
        }

        foreach (var key in expired ?? [])
        {
            _pending.Remove(key);
        }
    }

    private static string RandomToken(int length)
    {
        Span<char> token = stackalloc char[length];
        for (var i = 0; i < token.Length; i++)
        {
            token[i] = Alphabet[RandomNumberGenerator.GetInt32(Alphabet.Length)];
        }

        return new string(token);
    }
}

/// <summary>A request in flight through a service export: where its responses go.</summary>
internal sealed record PendingResponse(Account Importer, byte[] Reply, ServiceResponseType Type, long CreatedTick);
