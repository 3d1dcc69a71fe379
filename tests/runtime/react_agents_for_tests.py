"""What the ReActAgent cluster test ships to the Python workers (a module: the job
pickles these by reference)."""

from pydantic import BaseModel

from flink_agents_ltm.api.chat_models import tool

STOCK = {"teapot": 3, "kettle": 0}


@tool
def stock_of(item: str) -> int:
    """How many of an item are in stock."""
    return STOCK.get(item, 0)


class Availability(BaseModel):
    item: str
    in_stock: bool
