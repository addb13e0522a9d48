using Akka.Actor;

namespace Courier.Actors.Mqtt;

/// <summary>
/// An ended session leaves nothing behind: with no connection and nothing to keep (a clean session whose
/// connection ended, a kept one that expired or ended with Session Expiry Interval 0), once Discard's
/// journal and snapshot deletions are answered, the session tells its parent, which stops it and drops its
/// client id from the session index, unless a CONNECT was sent its way meanwhile.
/// </summary>
internal sealed partial class MqttSessionActor
{
    private bool _idle; // no connection and nothing kept: the parent stops it once Discard's deletions are answered
    private int _deletesInFlight; // Discard's journal and snapshot deletions not answered yet
    private long _discardedTo = long.MaxValue; // the last sequence number when Discard deleted the journal (its answer names it)

    // Nothing left to keep and no connection: the parent may stop this actor (and forget its client id) once
    // Discard's deletions are answered, unless a CONNECT was sent here since (it compares the attach count).
    private void BecomeIdle()
    {
        _idle = true;
        TellIdleIfDone();
    }

    private void DeletionAnswered(bool discard)
    {
        if (discard && _deletesInFlight > 0)
        {
            _deletesInFlight--;
            TellIdleIfDone();
        }
    }

    private void TellIdleIfDone()
    {
        if (_idle && _deletesInFlight == 0 && _connection is null)
        {
            _idle = false;
            Context.Parent.Tell(new MqttSessions.Protocol.Idle(_attaches));
        }
    }
}
