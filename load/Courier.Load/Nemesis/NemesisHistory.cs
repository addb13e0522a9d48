using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Courier.Load.Nemesis;

/// <summary>How an operation ended: done, definitely not done, or unknown (a timeout: it may have happened).</summary>
internal enum Outcome
{
    Ok,
    Fail,
    Info,
}

/// <summary>
/// One operation of the workload, Jepsen's shape: who, what, when it started and ended (µs since the run
/// began) and how it ended. <c>pub</c>: Key is the Nats-Msg-Id (also the payload), Seq the PubAck's
/// sequence. <c>read</c>/<c>cas</c>: Key is the KV key, Value the value read or written, Seq the revision
/// read or written, Expected the revision a CAS expected. <c>deliver</c>: Seq the stream sequence the
/// consumer was given, Key its payload; <c>ack</c> its acknowledgement.
/// </summary>
internal sealed record NemesisOp(string Kind, int Process, string Key, long Start, long End, Outcome Outcome, long Value, ulong Seq, ulong Expected, string? Error)
{
    public string ToCsv() => string.Create(CultureInfo.InvariantCulture,
        $"{Kind},{Process},{Key},{Start},{End},{Outcome},{Value},{Seq},{Expected},{Error?.Replace(',', ';').Replace('\n', ' ')}");
}

/// <summary>A fault as it happened: what, on which nodes, from and to (µs since the run began).</summary>
internal sealed record NemesisFaultSpan(string Name, string Nodes, long Start, long End);

/// <summary>The run's operations and faults, appended from many tasks.</summary>
internal sealed class NemesisHistory
{
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly ConcurrentQueue<NemesisOp> _ops = new();
    private readonly ConcurrentQueue<NemesisFaultSpan> _faults = new();

    /// <summary>µs since the run began.</summary>
    public long Now => _clock.ElapsedTicks * 1_000_000 / Stopwatch.Frequency;

    public void Add(NemesisOp op) => _ops.Enqueue(op);

    public void AddFault(NemesisFaultSpan span) => _faults.Enqueue(span);

    public IReadOnlyList<NemesisOp> Ops => [.. _ops];

    public IReadOnlyList<NemesisFaultSpan> Faults => [.. _faults];

    public void Write(string csvPath, string faultsPath)
    {
        var text = new StringBuilder("kind,process,key,start_us,end_us,outcome,value,seq,expected,error\n");
        foreach (var op in _ops.OrderBy(o => o.Start))
        {
            text.Append(op.ToCsv()).Append('\n');
        }

        File.WriteAllText(csvPath, text.ToString());
        var faults = new StringBuilder("fault,nodes,start_us,end_us\n");
        foreach (var f in _faults.OrderBy(f => f.Start))
        {
            faults.Append(CultureInfo.InvariantCulture, $"{f.Name},{f.Nodes},{f.Start},{f.End}\n");
        }

        File.WriteAllText(faultsPath, faults.ToString());
    }
}
