using Akka.Event;
using Courier.Protocols.JetStream;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// Lost data: what the store found damaged (on recovery or on read), in STREAM.INFO's
/// <c>state.lost</c> as nats-server's <c>LostStreamData</c>, and a log warning naming the stream.
/// </summary>
/// <remarks>
/// nats-server 2.9.10 reports lost messages only in the stream state (STREAM.INFO, and /jsz's
/// stream details); it publishes no advisory for them (jetstream_events.go has none) and logs
/// nothing. Courier adds the warning, so that an operator reading the log learns which stream lost what.
/// </remarks>
internal sealed partial class StreamActor
{
    private int _damageLogged; // store warnings already written to the log

    /// <summary>The stream state's <c>lost</c> (null when nothing was lost); logs damage found since the last call.</summary>
    private LostStreamData? LostInfo(StreamState state)
    {
        LogNewDamage();
        return state.Lost is { Msgs.Count: > 0 } lost ? new LostStreamData { Msgs = [.. lost.Msgs], Bytes = lost.Bytes } : null;
    }

    /// <summary>One warning per damage the store found since the last call, naming the stream, then a line of totals.</summary>
    private void LogNewDamage()
    {
        var damage = _store.Damage;
        if (damage.Detected <= _damageLogged)
        {
            return;
        }

        var warnings = _store.Warnings;
        for (var i = _damageLogged; i < warnings.Count; i++)
        {
            _log.Warning("JetStream stream '{0}': store damage: {1}", _config.Name, warnings[i]);
        }

        _damageLogged = warnings.Count;
        if (damage.MessagesLost > 0)
        {
            _log.Warning("JetStream stream '{0}' lost {1} message(s), {2} bytes, to damage in its store; STREAM.INFO state.lost lists them", _config.Name, damage.MessagesLost, damage.BytesLost);
        }
    }
}
