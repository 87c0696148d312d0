import pytest

from tracktale.stimuli.narrative.world import Event, InconsistentStory, simulate

BOXES = ("box", "bag", "drawer")


def test_replays_puts_moves_and_revelations():
    events = [
        Event("hidden", "ring", "drawer"),
        Event("put", "key", "box"),
        Event("found", "pen", "box"),
        Event("move", "key", "bag", "box"),
        Event("move", "ring", "box", "drawer"),
    ]
    result = simulate(events, BOXES)
    assert result.final_locations == {"ring": "box", "key": "bag", "pen": "box"}
    assert result.history["key"] == ["box", "bag"]


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ([Event("move", "key", "bag", "box")], "not in any container"),
        (
            [Event("put", "key", "box"), Event("move", "key", "drawer", "bag")],
            "in the box, not the bag",
        ),
        ([Event("put", "key", "box"), Event("move", "key", "box", "box")], "the same container"),
        ([Event("put", "key", "box"), Event("found", "key", "bag")], "is in the box"),
        ([Event("put", "key", "box"), Event("put", "key", "bag")], "already in the box"),
        ([Event("hidden", "key", "box"), Event("hidden", "key", "box")], "already in the box"),
        ([Event("put", "key", "shelf")], "no shelf in this story"),
    ],
)
def test_rejects_events_the_world_does_not_allow(events, message):
    with pytest.raises(InconsistentStory, match=message):
        simulate(events, BOXES)


def test_an_object_first_mentioned_while_moved_out_needs_an_earlier_placement():
    move_out = Event("move", "photo", "box", "basket")
    with pytest.raises(InconsistentStory, match="not in any container"):
        simulate([move_out], ("basket", "box"))
    placed = simulate([Event("hidden", "photo", "basket"), move_out], ("basket", "box"))
    assert placed.final_locations["photo"] == "box"


def test_event_data_round_trip_and_rejection():
    event = Event("move", "key", "bag", "box")
    assert Event.from_dict(event.to_dict()) == event
    with pytest.raises(InconsistentStory):
        Event.from_dict({"kind": "put", "object": "key", "target": "box", "source": "bag"})
    with pytest.raises(InconsistentStory):
        Event.from_dict({"kind": "teleport", "object": "key", "target": "box"})
